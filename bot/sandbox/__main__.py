"""`python -m bot.sandbox` (`make sandbox`): the bot against a local Bot API, played in the
browser at http://127.0.0.1:8080 (docs/sandbox.md)."""

from bot.sandbox.run import main

if __name__ == "__main__":
    main()
