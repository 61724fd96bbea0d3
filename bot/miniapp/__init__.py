"""The Mini App: the game's table drawn in a page inside Telegram, live, for its players and
anyone watching (docs/miniapp.md).

- `auth`: Telegram's initData verified, and the session token;
- `views`: the State JSON each viewer is sent (a seated player's own hand, never another's);
- `live`: the event streams of the leader, fed by every save of a game;
- `routes`: the routes on the bot's web server (`bot.web`) under `/app/`;
- `static/`: the page itself (HTML, JavaScript, CSS: no build step).
"""
