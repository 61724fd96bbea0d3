## Durak bot — English (the reference language: every key here must exist in de.ftl
## and ru.ftl with the same $variables; tests/test_locales.py checks it).
##
## Messages are sent with parse_mode=HTML: variables arrive already HTML-escaped; write
## no raw "<" or "&" (use &lt; and &amp; or valid Telegram tags only).
## Numbers ($count, $min, ...) are ints: pick plurals with { $count -> [one] ... *[other] ... }.
## Toasts (error-*, lobby-joined, ...) are plain text: no tags there.

## Counts

cards-count =
    { $count ->
        [one] { $count } card
       *[other] { $count } cards
    }
players-count =
    { $count ->
        [one] { $count } player
       *[other] { $count } players
    }

## Lobby

lobby-title = Durak: new game
lobby-created = { $name } wants to play Durak. Tap “Join” to take a seat.
lobby-opened-by = Opened by { $name }.
lobby-opener-join = { $name }, press “Join” to take your seat too.
lobby-players = Players ({ $count }/{ $max }): { $names }
lobby-nobody = nobody yet
lobby-invited = Invited: { $names } — tap “Join” to play.
lobby-invited-again = Waiting for: { $names } — tap “Ready for another” under the result, or “Join” here.
lobby-again-starts = The game starts by itself once they are all in, or a minute after the first tap with two or more players.
lobby-need-players =
    { $min ->
        [one] At least { $min } player is needed to start.
       *[other] At least { $min } players are needed to start.
    }
lobby-joined = You have a seat. Your cards will come in our private chat.
lobby-already-joined = You already have a seat.
lobby-not-joined = You have no seat in this lobby.
lobby-left = You left the lobby.
lobby-full = All seats are taken.
lobby-started = The game has started.
lobby-cancelled = This lobby was cancelled.
lobby-expired = Nobody started the game in time; the lobby has closed.
lobby-moved = This lobby continues in the message below.
lobby-again = You are in. The next game starts when all of you are in, or a minute after the first tap with two or more players.
again-left-out = The next game in { $chat } began without you. Join the one after it with /newgame in the group.
again-started = The next game has started already.
again-stale = This button belongs to an older game; it opens nothing. Send /newgame for a new game.
again-not-player = This button is for the players of this game. To play, tap “Join” in the lobby once it opens, or send /newgame.
newgame-lobby-open = A game is already being set up here: join it above.
again-lobby-open = A new game is already being set up below: join it there.
newgame-running = A game is running here. Wait for it to end, or /cancel it.
newgame-in-group = Durak is played in groups: add me to a group (the button below) and send /newgame there. To play against the computer right here, send /practice.
private-joined = You have a seat in the game in <b>{ $chat }</b>. Your cards will appear here.
private-lobby-cancelled = The game in <b>{ $chat }</b> was cancelled before it started.
private-lobby-expired = The game in <b>{ $chat }</b> did not start in time; its lobby is closed.
join-not-member = Only members of <b>{ $chat }</b> can join its game. Join the group, then press “Join” there.
group-blocked = { $player } has blocked me or has not started me yet, so I cannot send their cards. Open { $link }, tap Start (or Restart after a block), then send /hand. Until then I move for them when their time runs out; three times in a row and they lose.
group-blocked-no-limit = { $player } has blocked me or has not started me yet, so I cannot send their cards. Open { $link }, tap Start (or Restart after a block), then send /hand. Until then the game waits for them (there is no time limit); an admin can remove them with /kick as a reply to one of their messages.
game-cancelled = The game was cancelled. No result is recorded.

## Rules

rules-title = Rules
rules-title-chat = Rules of the game in { $chat }
rules-title-practice = Rules of your practice game
rules-preset = Preset: { $preset }
rules-deck = Deck: { $count } cards
rules-throw-in = Who may throw in: { $mode }
rules-first-bout = Until the first discard: at most { $count } cards per bout
rules-transfer = Transfers (Perevodnoy): { $value }
rules-show-trump = Transfer by showing a trump: { $value }
rules-trump-exchange = Swap the lowest trump for the face-up trump: { $value }
rules-redeal = A player with five or more cards of one suit and no trump may ask for a new deal: { $value }
rules-timeout = Time per move: { $seconds } s
rules-no-timeout = No time limit per move
rules-summary = Rules: { $preset } · { $cards } · transfers { $transfers } — /rules for all
value-on = on
value-off = off
preset-classic = classic
preset-perevodnoy = perevodnoy
preset-online = online
preset-short = short (32 cards)
preset-custom = custom
throw-in-all = everybody
throw-in-neighbours = the defender's neighbours
throw-in-neighbours_at_5 = everybody, only the neighbours with 5 or more players

## Buttons

button-join = Join
button-leave = Leave
button-start = Start
button-cancel = Cancel
button-take = Take
button-pass = Done
button-pass-take = Done
button-transfer = Transfer { $card }
button-show-trump = Show { $card } to transfer
button-exchange = Swap for the trump
button-redeal = Ask for a new deal
button-cover = Cover { $attack } with { $card }
button-back = Back
button-resign = Yes, I give up
button-play-on = No, I play on
button-again = Ready for another
button-open-hand = My cards
button-add-to-group = Add me to a group
button-rules = Rules
button-howto = How to play

## The table (group)

table-title = Durak
table-trump = Trump { $card } · stock { $stock } · discard { $discard }
table-empty = The table is empty.
table-waiting = Waiting for { $names }.
table-window = ⏳ Beaten off { $time } unless someone throws in.
table-window-take = ⏳ { $player } takes it all { $time } unless someone throws in.
table-waiting-until = ⏳ Waiting for { $names }: time runs out { $time }.
table-last-beaten = Last bout: { $cards } beaten off
table-last-picked = Last bout: { $player } took { $cards }
time-at = at { $time } UTC
seat-out = out
seat-draws = draws after the bout
seat-takes = takes
seat-passed = done
seat-passed-take = done
seat-may-add = may throw in
seat-durak = durak

## Mini App (the table drawn, beside the chat: bot/miniapp; app-* go to the page as they are,
## with { $name } placeholders the page fills in: plain text, no plurals)

button-app-table = Table
button-app-hand = Open the table
app-no-game = No game here.
app-refused-forged = This link could not be verified. Open the table from the bot's button again.
app-refused-expired = This link has expired. Open the table from the bot's button again.
app-refused-missing = Open the table from the bot's button in Telegram.
app-unavailable = The table is restarting. One moment…
app-busy = Too many tables open. Close one and try again.
app-bad-request = That did not work. Please try again.
app-reconnecting = Reconnecting…
app-your-turn = Your turn
app-choose = Which one?
app-stock = Stock
app-discard = Discard
app-trump = Trump
app-onlooker = You are watching. Only the players see their cards.
app-result = Game over
app-soon = soon

## Mini App page (the page itself: bot/miniapp/static/app.js; plain text)

app-page-title = Durak
app-page-you = you
app-page-role-attacker = attacks
app-page-role-defender = defends
app-page-role-thrower = throws in
app-page-role-out = out
app-page-table-empty = No cards on the table.
app-page-cancel = Cancel
app-page-failed = No answer. Try again.

## Mini App page: a table that cannot be shown any more (its event stream refused for good)

app-page-ended = This game is over or no longer exists.
app-page-expired = This view has expired. Open the table again from the chat.
app-page-too-many = Too many tables are open. Close one, then open this one again.

## Mini App page: a computer's seat (its 🤖 mark, read out by screen readers)

app-page-computer = computer player

## The hand (private)

hand-title = Durak in <b>{ $chat }</b>
hand-title-practice = Durak: <b>practice</b>
hand-table = Table:
hand-you-open = Your turn: attack { $player } with any card.
hand-they-open = { $player } attacks { $target }.
hand-you-attack = You attack { $player }.
hand-you-defend = Defend against { $player }: tap a card to cover, or take.
hand-you-defend-transfer = Defend against { $player }: tap a card to cover, transfer with a button below, or take.
hand-you-take = You take. The others may still throw in.
hand-you-take-one = You take. { $player } may still throw in.
hand-you-are-attacked = { $player } attacks you: wait for the first card.
hand-you-covered = Everything is covered. The others may still throw in.
hand-you-covered-one = Everything is covered. { $player } may still throw in.
hand-you-may-add = You may throw in a card of a rank on the table, or tap Done.
hand-you-may-add-take = { $player } takes. You may still throw in a card of a rank on the table, or tap Done.
hand-you-may-add-now = You may throw in a card of a rank on the table.
hand-you-are-out = You are out of the game. Well played!
hand-time-left = ⏳ Your time runs out { $time }.
hand-window = Beaten off { $time }: tap a card to throw in, or Done.
hand-window-take = { $player } takes it all { $time }: tap a card to throw in, or Done.
hand-timed-out = Your time ran out, so I moved for you ({ $count } of { $max } in a row; at { $max } you lose this game as the durak).
hand-choose = Which one?
hand-confirm-transfer = Transfer the attack? { $player } would defend then.
hand-empty = You have no cards.
hand-last-cards = Your last cards: { $cards }
hand-result-you-durak = You are the durak.
hand-result-place = Your place: { $place } of { $count }.
hand-cancelled = This game was cancelled.
hand-replaced = Your cards are in the newer message below.
hand-bot-removed = I was removed from the group; the game has ended.

## Events (the table's last moves)

log-attack = { $player } attacks
log-add = { $player } throws in
log-defend = { $player } covers a card
log-transfer = { $player } transfers to { $target }
log-show = { $player } shows a trump and transfers to { $target }
log-take = { $player } takes
log-pass = { $player } is done
log-beaten =
    { $count ->
        [one] { $count } card beaten off
       *[other] { $count } cards beaten off
    }
log-picked =
    { $count ->
        [one] { $player } picks up { $count } card
       *[other] { $player } picks up { $count } cards
    }
log-out = { $player } is out
log-exchange = { $player } swaps the lowest trump for the face-up trump
log-resign = { $player } gives up
log-redeal = { $player } asks for a new deal; the cards are dealt again
log-timeout = { $player } runs out of time
log-removed = { $player } is removed after three timeouts
log-kicked = { $player } is removed from the game
log-left = { $player } leaves the group
# The same events, naming the cards they made public (one line per bout on the table)
log-attack-cards = { $player } attacks { $cards }
log-add-cards = { $player } throws in { $cards }
log-defend-cards = { $player } covers { $attack } with { $card }
log-transfer-cards = { $player } transfers with { $cards } to { $target }
log-show-cards = { $player } shows { $cards } and transfers to { $target }
log-beaten-cards = beaten off: { $cards }
log-picked-cards = { $player } takes { $cards }
log-exchange-cards = { $player } swaps { $card } for the face-up trump { $trump }

## The end

result-title = Game over
result-durak = The durak is { $player }.
result-draw = A draw: the last cards left the table together.
result-resigned = { $player } gave up.
result-timed-out = { $player } was removed for not moving.
result-order = Out, in order:
result-bouts =
    { $count ->
        [one] { $count } bout
       *[other] { $count } bouts
    }
# $games: games this evening; $tally: result-evening-durak entries (and result-evening-draws)
result-evening = Tonight, { $games } games together — times the durak: { $tally }
result-evening-durak = { $player } { $count }
result-evening-draws = { $count ->
        [one] { $count } draw
       *[other] { $count } draws
    }

## /leave, /start, /help

leave-confirm = { $player }, do you really want to give up? You will be the durak.
leave-confirm-practice = { $player }, do you really want to give up this practice game? You will be the durak.
leave-kept = You play on.
welcome = <b>Durak</b>, the Russian card game, for your group. Add me to a group and send /newgame there. Each player gets their cards here, as buttons; the table lives in the group. To play against the computer right here, send /practice; /howto explains the rules.
private-unknown = I only understand commands: /help lists them, and /practice starts a game against the computer right here.
private-unknown-command = I don't know that command: /help lists mine.
group-hello = Hello! I run games of <b>Durak</b> here. Send /newgame to open one: everyone who wants to play taps “Join”, and I send each player their cards in private. /help explains the rest.
help-text =
    <b>Durak</b>
    <b>How it works here:</b> /newgame in a group opens a game; tap “Join”, then “Start”. Your cards come in your private chat with me. Tap a card to attack or to cover, “Take” to pick up the table, “Done” when you add nothing more, and “Transfer” (with transfers, Perevodnoy) to pass the attack on. Cards between dots cannot be played now: tap one to see why. Whoever still holds cards at the end is the durak.
    <b>Commands:</b> /howto how to play Durak · /rules the rules in force · /hand your cards again · /leave give up (you are the durak) · /cancel end the game (opener or admin) · /stats the leaderboard and your record · /settings house rules (admins) · /kick remove a player (admins, as a reply) · /practice play against the computer (in our private chat).

## /leave in the private chat (the player's one running group game: asked there, in their language)

leave-confirm-group = { $player }, do you really want to give up the game in <b>{ $chat }</b>? You will be the durak.
leave-no-game = You are not playing in any game right now.
leave-in-lobby-group = The game in <b>{ $chat }</b> has not started yet: to give up your seat, tap “Leave” in its lobby.
leave-done-private = You gave up: you are the durak of this game.

## How to play (/howto, the “How to play” buttons, and before a newcomer's first practice game)
## One line per topic, one phone screen in all (at most 12 lines, about 800 characters:
## tests/bot/test_texts_fit.py measures them); the rules as the engine plays them (docs/rules.md).
## $low: a rank (6, 9, A).

howto-title = How to play Durak
howto-title-chat = How to play Durak in { $chat }
howto-goal = <b>Goal:</b> get rid of your cards. The last one holding cards is the durak (the fool); last cards out together: a draw.
howto-deal = <b>Deck:</b> { $cards }, { $low } to ace; { $hand } dealt each, the card under the stock sets trumps.
howto-first-redeal = The lowest trump attacks first (none dealt: a new deal).
howto-first-random = The lowest trump attacks first (none dealt: one drawn by lot).
howto-beat = <b>Beating:</b> a higher card of the suit beats, any trump beats a non-trump: { $higher } beats { $lower }; with { $suit } trumps, { $trump } beats { $ace }.
howto-bout = <b>A bout:</b> the attacker plays to the player on their left, who covers each card or takes.
howto-throw-in-all = <b>Throwing in:</b> the others add cards of ranks on the table,
howto-throw-in-neighbours = <b>Throwing in:</b> the defender's two neighbours add cards of ranks on the table,
howto-throw-in-neighbours_at_5 = <b>Throwing in:</b> the others (from 5 players, the defender's neighbours) add cards of ranks on the table,
howto-limit = up to { $max } cards ({ $first } before the first discard), never more than the defender had.
howto-limit-flat = up to { $max } cards, never more than the defender had.
howto-transfer = <b>Transfer:</b> before covering, the defender may add the same rank; the next player defends them all.
howto-show-trump = Showing the trump of that rank is enough.
howto-beaten = <b>All covered:</b> discarded, the defender attacks next.
howto-taken = <b>Taken:</b> the player after the taker does.
howto-draw = Then all draw up to { $hand }, the attacker first; once the stock is empty, a player without cards is out.
howto-exchange = <b>Trump swap:</b> the lowest trump (the { $low }) may take the face-up trump.
howto-redeal = <b>New deal:</b> before the first card, a player with five of a suit and no trump may ask for one.
info-above = It is just above: I posted it a moment ago.

## Errors (callback toasts: plain text, under 200 characters)

error-not-your-turn = It's not your turn.
error-stale = This button is out of date; here is your current hand.
error-stale-shown = Too late: the game has moved on. Your hand shows where it is now.
error-stale-after = Too late: { $player } moved first. Your hand shows where it is now.
error-not-in-game = You are not playing in this game.
error-game-gone = This game is over.
error-lobby-closed = This lobby is closed.
error-lobby-closed-newer = That lobby is closed, but a new one is open in <b>{ $chat }</b>: press “Join” there.
error-anonymous = You are posting as the group or a channel, so I can't tell who you are. To play or to manage a game, post as yourself (admins: turn off “Remain anonymous”).
error-no-game = There is no game running here.
error-not-opener = Only the player who opened the game or a chat admin can do that.
error-computers-opener = Only { $opener } (who opened this game) or a chat admin can add or remove computers.
error-unknown-button = I don't know this button.
error-conflict = Something changed at the same moment; please tap again.
error-storage = That could not be saved just now, so nothing happened. Please tap again.
error-unavailable = That could not be saved: the bot's server cannot store games at the moment, so nothing happened. Please try again later.
error-later = The bot cannot store that right now. It is kept and counts as soon as the bot can store again.
operator-database-down = ⚠️ The database cannot store anything: { $cause }. Until it can, taps and commands are answered “could not be saved” and games wait. (One message per outage.)
operator-database-back = ✅ The database stores again, after { $seconds } s and { $failures } failed saves; games go on.
error-game-over = The game is over.
error-unknown-player = You are not playing in this game.
error-player-out = You are already out of this game.
leave-in-lobby = The game has not started yet: to give up your seat, tap “Leave” in the lobby.
error-card-not-in-hand = You don't have that card.
error-rank-not-on-table = You can only add a card of a rank already on the table.
error-does-not-beat = That card does not beat any open card.
error-limit-reached = No more cards fit on the table in this bout.
error-transfer-not-allowed = You can't transfer now.
error-no-such-attack = That card is not an open attack.
error-cannot-take = There is nothing to take.
error-cannot-pass = You can't tap Done now.
error-exchange-not-allowed = You can't swap for the trump.
error-redeal-not-allowed = You can't ask for a new deal.

## Command menu

cmd-newgame = Start a new game of Durak
cmd-rules = Show the rules
cmd-hand = Send my cards again
cmd-leave = Give up the current game
cmd-cancel = Cancel the game (opener or admin)
cmd-help = Buttons and commands
cmd-howto = How to play Durak
cmd-start = Start talking to me

## Sandbox (the local page of `make sandbox`, bot/sandbox/static: plain text, no tags)

sandbox-title = Durak sandbox
sandbox-banner = A local sandbox: the bot plays against a pretend Telegram on this computer. Nothing leaves it.
sandbox-banner-real = Your own bot in Telegram: get a token from @BotFather, then run BOT_TOKEN=… make run
sandbox-group-title = Durak club
sandbox-default-people = Alice, Bob
sandbox-group = Group
sandbox-private = Private chat
sandbox-people = Playing as
sandbox-add-person = Add person
sandbox-name = Name
sandbox-full = At most 6 people.
sandbox-restart = Restart the bot
sandbox-bot-running = Bot running
sandbox-bot-starting = Bot starting…
sandbox-bot-stopped = Bot stopped
sandbox-message = Message
sandbox-send = Send
sandbox-start = Start
sandbox-not-started = You have not started the bot yet.
sandbox-notifies = This message rings the phone
sandbox-edited = edited
sandbox-ok = OK
sandbox-open-table = Open the table
sandbox-close = Close
sandbox-gone = That message is gone.
sandbox-offline = The sandbox is not answering.

## /settings (group admins; the lobby's opener before the game starts)

settings-title = House rules
settings-intro = Tap to change: for the next game, and in an open lobby.
settings-closed = The house rules for the next games (/settings changes them):
use-in-group = Send { $command } in <b>{ $chat }</b>, where that game is played.
settings-saved = Saved.
settings-menu-changed = This menu has changed: tap your choice again.
settings-close = Done
settings-seconds = { $seconds } s
settings-preset = Preset
settings-deck = Deck
settings-transfer = Transfers
settings-transfer-help = pass the attack on with the same rank
settings-show-trump = Show a trump
settings-show-trump-help = transfer by showing the trump
settings-throw-in = Throwing in
settings-throw-in-all = everybody
settings-throw-in-neighbours = neighbours
settings-throw-in-neighbours_at_5 = neighbours at 5+
settings-first-bout = Until 1st discard
settings-first-bout-help = cards per bout until then
settings-trump-exchange = Trump swap
settings-trump-exchange-help = the lowest trump takes the face-up one
settings-timeout = Time per move
settings-timeout-help = then I move; three in a row: the durak
settings-window = Throw-in time
settings-window-help = then the bout ends by itself
settings-language = Language
settings-computers = Computers on the leaderboard
settings-alerts = Turn alerts
settings-alerts-help = a turn after a pause comes as a new message
my-settings-title = Your settings
my-settings-intro = For every game you play. A group's house rules are set there, with /settings.
my-settings-alerts-help = after a pause, your turn comes as a new message, which your phone announces; off: the hand is only edited, silently
my-settings-alerts-y = Alerts on
my-settings-alerts-n = Alerts off
my-settings-alerts-g = As each group sets it
value-group-default = as each group sets it
language-en = English
language-de = Deutsch
language-ru = Русский
error-admins-only = Only chat admins can do that (or the lobby's opener, before the start).
error-admins-only-chat = Only chat admins can change this.
error-kick-admins = Only chat admins can remove a player.
kick-already-out = This player is no longer in the game.

## Moderation

kick-how = Reply to a message of a player in the running game with /kick.
kick-in-group = Players are removed in their group: reply there to a message of the player with /kick.
kick-confirm = Remove { $player } from the game? They will be the durak.
button-kick = Remove { $player }
button-kick-no = No
kick-dropped = { $player } stays in the game.
result-kicked = { $player } was removed by an admin.
result-left = { $player } left the group.
warn-time = ⏳ Half your time is gone: your move in { $chat }, time runs out { $time }.

## /stats

stats-title = Leaderboard: { $chat }
# $tally: stats-tally, e.g. "4 games, durak twice (50%)"
stats-line = { $rank }. { $name }: { $rating } · { $tally }
stats-empty = No finished games in this group yet.
stats-footer = The number after a name is the rating, from the order players go out in: 0 for a new player, higher is better.
# $min: games from which a rating is settled (3)
stats-provisional-note = “Provisional”: fewer than { $min ->
        [one] { $min } game
       *[other] { $min } games
    } so far, the rating still moves a lot.
stats-computer-mark = 🤖 computer player
stats-player-title = Record of { $name }
stats-overall = All groups
stats-tally = { $games ->
        [one] { $games } game
       *[other] { $games } games
    }, { $durak ->
        [0] never the durak
        [1] durak once ({ $rate })
        [2] durak twice ({ $rate })
       *[other] durak { $durak } times ({ $rate })
    }
stats-run-clean = { $n ->
        [one] Not the durak in the last game
       *[other] { $n } games in a row without being the durak
    }
stats-run-durak = { $n ->
        [one] The durak in the last game
       *[other] The durak { $n } games in a row
    }
stats-rating-place = Rating { $rating } · place { $rank } of { $of } { $scope ->
        [group] in this group
       *[all] over all groups
    }
stats-rating = Rating { $rating }
stats-provisional = { $rating } (provisional)
stats-rating-note = The rating comes from the order players go out in: 0 for a new player, higher is better; provisional before { $min ->
        [one] { $min } game
       *[other] { $min } games
    }.
stats-no-games = No finished group games yet (practice games don't count).
cmd-stats = Leaderboard and records
cmd-settings = House rules (admins)
cmd-kick = Remove a player (reply, admins)

## Computer players and practice

button-add-computer = Add computer
button-remove-computer = Remove computer
lobby-computer-removed = The last computer player left the table.
level-easy = easy
level-medium = medium
level-hard = hard
computer-name = Computer { $n } ({ $level })
lobby-computer-added = A computer player has a seat.
lobby-need-human = At least one person must play.
lobby-too-many = Too many players for this deck: { $extra ->
        [one] { $extra } player must
       *[other] { $extra } players must
    } leave, or an admin picks a bigger deck in /settings.
lobby-pick-level = How strong should the computer player be?
practice-intro = Practice against computer players. How many opponents, and how strong?
practice-button = { $level }: { $count }
practice-title = Practice
practice-running = You are already playing a practice game here; finish it or send /cancel.
practice-in-private = Practice games are played in our private chat: send me /practice there.
cmd-practice = Practice against the computer
error-not-your-button = This button is for another player.
