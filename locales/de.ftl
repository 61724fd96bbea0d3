## Durak-Bot — Deutsch (Referenzsprache ist en.ftl: Jeder Schlüssel von dort muss hier
## mit denselben $Variablen vorkommen; tests/test_locales.py prüft das).
##
## Nachrichten werden mit parse_mode=HTML gesendet: Variablen kommen bereits HTML-maskiert an;
## kein rohes "<" oder "&" schreiben (&lt; und &amp; oder nur gültige Telegram-Tags verwenden).
## Zahlen ($count, $min, ...) sind ints: Plural mit { $count -> [one] ... *[other] ... } wählen.
## Toasts (error-*, lobby-joined, ...) sind reiner Text: keine Tags.

## Anzahlen

cards-count =
    { $count ->
        [one] { $count } Karte
       *[other] { $count } Karten
    }
players-count =
    { $count ->
        [one] { $count } Spieler
       *[other] { $count } Spieler
    }

## Lobby

lobby-title = Durak: neues Spiel
lobby-created = { $name } möchte Durak spielen. Tippe auf „Mitspielen“, um Platz zu nehmen.
lobby-opened-by = Eröffnet von { $name }.
lobby-opener-join = { $name }, tippe auch du auf „Mitspielen“, um Platz zu nehmen.
lobby-players = Spieler ({ $count }/{ $max }): { $names }
lobby-nobody = noch niemand
lobby-invited = Eingeladen: { $names } — wer mitspielt, tippt auf „Mitspielen“.
lobby-invited-again = Wir warten auf { $names } — tippt unter dem Ergebnis auf „Noch ein Spiel!“ oder hier auf „Mitspielen“.
lobby-again-starts = Das Spiel beginnt von selbst, sobald alle dabei sind, oder ab zwei Spielern eine Minute nach dem ersten Tippen.
lobby-need-players =
    { $min ->
        [one] Zum Starten wird mindestens { $min } Spieler benötigt.
       *[other] Zum Starten werden mindestens { $min } Spieler benötigt.
    }
lobby-joined = Du hast einen Platz. Deine Karten bekommst du in unserem privaten Chat.
lobby-already-joined = Du hast schon einen Platz.
lobby-not-joined = Du hast in dieser Lobby keinen Platz.
lobby-left = Du hast die Lobby verlassen.
lobby-full = Alle Plätze sind besetzt.
lobby-started = Das Spiel hat begonnen.
lobby-cancelled = Diese Lobby wurde abgebrochen.
lobby-expired = Niemand hat das Spiel rechtzeitig gestartet; die Lobby ist geschlossen.
lobby-moved = Diese Lobby findest du in der Nachricht weiter unten.
lobby-again = Du bist dabei. Das nächste Spiel beginnt, sobald alle dabei sind, oder ab zwei Spielern eine Minute nach dem ersten Tippen.
again-left-out = Das nächste Spiel in { $chat } hat ohne dich begonnen. Beim übernächsten bist du mit /newgame in der Gruppe dabei.
again-started = Das nächste Spiel hat schon begonnen.
again-stale = Diese Schaltfläche gehört zu einem älteren Spiel und öffnet nichts mehr. Sende /newgame für ein neues Spiel.
again-not-player = Hier melden sich nur die Spieler dieses Spiels. Wer mitspielen will, tippt in der Lobby auf „Mitspielen“, sobald sie offen ist, oder sendet /newgame.
newgame-lobby-open = Hier wird schon ein Spiel vorbereitet: Mach oben mit.
again-lobby-open = Unten wird schon ein neues Spiel vorbereitet: Mach dort mit.
newgame-running = Hier läuft gerade ein Spiel. Warte, bis es vorbei ist, oder brich es mit /cancel ab.
newgame-in-group = Durak wird in Gruppen gespielt: Füge mich einer Gruppe hinzu (Schaltfläche unten) und sende dort /newgame. Gegen den Computer spielst du gleich hier mit /practice.
private-joined = Du hast einen Platz im Spiel in der Gruppe <b>{ $chat }</b>. Deine Karten erscheinen hier.
private-lobby-cancelled = Das Spiel in <b>{ $chat }</b> wurde abgebrochen, bevor es begann.
private-lobby-expired = Das Spiel in <b>{ $chat }</b> hat nicht rechtzeitig begonnen; die Lobby ist geschlossen.
join-not-member = Nur Mitglieder von <b>{ $chat }</b> können dort mitspielen. Tritt der Gruppe bei und tippe dann dort auf „Mitspielen“.
group-blocked = { $player } hat mich blockiert oder nie gestartet, deshalb kann ich die Karten nicht zustellen. Öffne { $link }, tippe auf „Starten“ (oder „Neu starten“ nach einer Blockierung) und sende dann /hand. Bis dahin spiele ich nach Ablauf der Zeit für diesen Spieler; beim dritten Mal in Folge verliert er.
group-blocked-no-limit = { $player } hat mich blockiert oder nie gestartet, deshalb kann ich die Karten nicht zustellen. Öffne { $link }, tippe auf „Starten“ (oder „Neu starten“ nach einer Blockierung) und sende dann /hand. Bis dahin wartet das Spiel (es gibt kein Zeitlimit); ein Admin kann den Spieler mit /kick als Antwort auf eine seiner Nachrichten entfernen.
game-cancelled = Das Spiel wurde abgebrochen. Es wird kein Ergebnis gewertet.

## Regeln

rules-title = Regeln
rules-title-chat = Regeln des Spiels in { $chat }
rules-title-practice = Regeln deines Trainingsspiels
rules-preset = Variante: { $preset }
rules-deck = Kartendeck: { $count } Karten
rules-throw-in = Zuwerfen dürfen: { $mode }
rules-first-bout = Bis zur ersten Ablage: höchstens { $count } Karten pro Runde
rules-transfer = Weiterschieben (Perewodnoi): { $value }
rules-show-trump = Weiterschieben durch Zeigen eines Trumpfs: { $value }
rules-trump-exchange = Niedrigsten Trumpf gegen den offenen Trumpf tauschen: { $value }
rules-redeal = Wer fünf oder mehr Karten einer Farbe und keinen Trumpf hat, darf neu austeilen lassen: { $value }
rules-timeout = Zeit pro Zug: { $seconds } s
rules-no-timeout = Kein Zeitlimit pro Zug
rules-summary = Regeln: { $preset } · { $cards } · Weiterschieben { $transfers } — alle mit /rules
value-on = an
value-off = aus
preset-classic = klassisch
preset-perevodnoy = Perewodnoi
preset-online = online
preset-short = kurz (32 Karten)
preset-custom = angepasst
throw-in-all = alle
throw-in-neighbours = die Nachbarn des Verteidigers
throw-in-neighbours_at_5 = alle, ab 5 Spielern nur die Nachbarn

## Schaltflächen

button-join = Mitspielen
button-leave = Aussteigen
button-start = Starten
button-cancel = Abbrechen
button-take = Aufnehmen
button-pass = Fertig
button-pass-take = Fertig
button-transfer = { $card } weiterschieben
button-show-trump = { $card } zeigen und weiterschieben
button-exchange = Gegen den Trumpf tauschen
button-redeal = Neu austeilen lassen
button-cover = { $attack } mit { $card } schlagen
button-back = Zurück
button-resign = Ja, ich gebe auf
button-play-on = Nein, ich spiele weiter
button-again = Noch ein Spiel!
button-open-hand = Meine Karten
button-add-to-group = Zu einer Gruppe hinzufügen
button-rules = Regeln
button-howto = So wird gespielt

## Der Tisch (Gruppe)

table-title = Durak
table-trump = Trumpf { $card } · Stapel { $stock } · Ablage { $discard }
table-empty = Der Tisch ist leer.
table-waiting = Wir warten auf { $names }.
table-window = ⏳ Die Runde gilt { $time } als abgewehrt, wenn niemand mehr zuwirft.
table-window-take = ⏳ { $player } nimmt { $time } alles auf, wenn niemand mehr zuwirft.
table-waiting-until = ⏳ Wir warten auf { $names }: Die Zeit läuft { $time } ab.
table-last-beaten = Letzte Runde: { $cards } abgelegt
table-last-picked = Letzte Runde: { $player } nahm { $cards } auf
time-at = um { $time } UTC
seat-out = raus
seat-draws = zieht nach der Runde nach
seat-takes = nimmt auf
seat-passed = fertig
seat-passed-take = fertig
seat-may-add = darf zuwerfen
seat-durak = Durak

## Mini App (der gezeichnete Tisch neben dem Chat: bot/miniapp; app-* gehen so an die Seite,
## mit { $name }-Platzhaltern, die die Seite füllt: reiner Text, keine Pluralformen)

button-app-table = Tisch
button-app-hand = Tisch öffnen
app-no-game = Hier läuft kein Spiel.
app-refused-forged = Dieser Link ließ sich nicht prüfen. Öffne den Tisch erneut über die Schaltfläche des Bots.
app-refused-expired = Dieser Link ist abgelaufen. Öffne den Tisch erneut über die Schaltfläche des Bots.
app-refused-missing = Öffne den Tisch über die Schaltfläche des Bots in Telegram.
app-unavailable = Der Tisch startet neu. Einen Moment…
app-busy = Zu viele Tische offen. Schließe einen und versuche es erneut.
app-bad-request = Das hat nicht geklappt. Bitte versuche es erneut.
app-reconnecting = Verbinde neu…
app-your-turn = Du bist dran
app-choose = Welcher Zug?
app-stock = Stapel
app-discard = Ablage
app-trump = Trumpf
app-onlooker = Du schaust zu. Nur die Spieler sehen ihre Karten.
app-result = Spiel vorbei
app-soon = gleich

## Mini App page (die Seite selbst: bot/miniapp/static/app.js; reiner Text)

app-page-title = Durak
app-page-you = du
app-page-role-attacker = greift an
app-page-role-defender = verteidigt
app-page-role-thrower = wirft zu
app-page-role-out = raus
app-page-table-empty = Keine Karten auf dem Tisch.
app-page-cancel = Abbrechen
app-page-failed = Keine Antwort. Versuch es noch einmal.

## Mini App page: ein Tisch, der sich nicht mehr zeigen lässt (sein Ereignisstrom endgültig abgelehnt)

app-page-ended = Dieses Spiel ist vorbei oder existiert nicht mehr.
app-page-expired = Diese Ansicht ist abgelaufen. Öffne den Tisch erneut aus dem Chat.
app-page-too-many = Zu viele Tische offen. Schließe einen und öffne diesen dann erneut.

## Mini App page: der Platz eines Computers (sein 🤖, von Screenreadern vorgelesen)

app-page-computer = Computerspieler

## Die Hand (privat)

hand-title = Durak in <b>{ $chat }</b>
hand-title-practice = Durak: <b>Training</b>
hand-table = Tisch:
hand-you-open = Du bist dran: Greif { $player } mit einer beliebigen Karte an.
hand-they-open = { $player } greift { $target } an.
hand-you-attack = Du greifst { $player } an.
hand-you-defend = Wehr dich gegen { $player }: Tippe eine Karte zum Schlagen an oder nimm auf.
hand-you-defend-transfer = Wehr dich gegen { $player }: Tippe eine Karte zum Schlagen an, schieb mit einer Schaltfläche unten weiter oder nimm auf.
hand-you-take = Du nimmst auf. Die anderen dürfen noch zuwerfen.
hand-you-take-one = Du nimmst auf. { $player } darf noch zuwerfen.
hand-you-are-attacked = { $player } greift dich an: Warte auf die erste Karte.
hand-you-covered = Alles ist geschlagen. Die anderen dürfen noch zuwerfen.
hand-you-covered-one = Alles ist geschlagen. { $player } darf noch zuwerfen.
hand-you-may-add = Du kannst eine Karte zuwerfen, deren Wert schon auf dem Tisch liegt, oder auf „Fertig“ tippen.
hand-you-may-add-take = { $player } nimmt auf. Du kannst noch eine Karte zuwerfen, deren Wert auf dem Tisch liegt, oder auf „Fertig“ tippen.
hand-you-may-add-now = Du kannst eine Karte zuwerfen, deren Wert schon auf dem Tisch liegt.
hand-you-are-out = Du bist raus. Gut gespielt!
hand-time-left = ⏳ Deine Zeit läuft { $time } ab.
hand-window = Die Runde gilt { $time } als abgewehrt: Karte zum Zuwerfen antippen oder „Fertig“.
hand-window-take = { $player } nimmt { $time } alles auf: Karte zum Zuwerfen antippen oder „Fertig“.
hand-timed-out = Deine Zeit ist abgelaufen, darum habe ich für dich gespielt ({ $count } von { $max } in Folge; beim { $max }. Mal bist du der Durak).
hand-choose = Welcher Zug?
hand-confirm-transfer = Weiterschieben? Dann verteidigt { $player }.
hand-empty = Du hast keine Karten.
hand-last-cards = Deine letzten Karten: { $cards }
hand-result-you-durak = Du bist der Durak.
hand-result-place = Dein Platz: { $place } von { $count }.
hand-cancelled = Dieses Spiel wurde abgebrochen.
hand-replaced = Deine Karten sind in der neuen Nachricht unten.
hand-bot-removed = Ich wurde aus der Gruppe entfernt; das Spiel ist beendet.

## Ereignisse (die letzten Züge am Tisch)

log-attack = { $player } spielt aus
log-add = { $player } wirft zu
log-defend = { $player } schlägt eine Karte
log-transfer = { $player } schiebt an { $target } weiter
log-show = { $player } zeigt einen Trumpf und schiebt an { $target } weiter
log-take = { $player } nimmt auf
log-pass = { $player } ist fertig
log-beaten =
    { $count ->
        [one] { $count } Karte kommt auf die Ablage
       *[other] { $count } Karten kommen auf die Ablage
    }
log-picked =
    { $count ->
        [one] { $player } nimmt { $count } Karte auf
       *[other] { $player } nimmt { $count } Karten auf
    }
log-out = { $player } ist raus
log-exchange = { $player } tauscht den niedrigsten Trumpf gegen den offenen Trumpf
log-resign = { $player } gibt auf
log-redeal = { $player } verlangt neues Austeilen; die Karten werden neu ausgeteilt
log-timeout = Bei { $player } ist die Zeit abgelaufen
log-removed = { $player } wird nach drei Zeitüberschreitungen entfernt
log-kicked = { $player } wird aus dem Spiel entfernt
log-left = { $player } verlässt die Gruppe
# The same events, naming the cards they made public (one line per bout on the table)
log-attack-cards = { $player } spielt { $cards } aus
log-add-cards = { $player } wirft { $cards } zu
log-defend-cards = { $player } schlägt { $attack } mit { $card }
log-transfer-cards = { $player } schiebt mit { $cards } an { $target } weiter
log-show-cards = { $player } zeigt { $cards } und schiebt an { $target } weiter
log-beaten-cards = abgelegt: { $cards }
log-picked-cards = { $player } nimmt { $cards } auf
log-exchange-cards = { $player } tauscht { $card } gegen den offenen Trumpf { $trump }

## Das Ende

result-title = Spiel vorbei
result-durak = Der Durak ist { $player }.
result-draw = Unentschieden: Die letzten Karten haben den Tisch gleichzeitig verlassen.
result-resigned = { $player } hat aufgegeben.
result-timed-out = { $player } wurde wegen Untätigkeit entfernt.
result-order = Ausgeschieden, in dieser Reihenfolge:
result-bouts =
    { $count ->
        [one] { $count } Runde
       *[other] { $count } Runden
    }
result-evening = Heute schon { $games } Spiele zusammen — so oft Durak: { $tally }
result-evening-durak = { $player } { $count }
result-evening-draws = { $count } Unentschieden

## /leave, /start, /help

leave-confirm = { $player }, willst du wirklich aufgeben? Dann bist du der Durak.
leave-confirm-practice = { $player }, willst du dieses Trainingsspiel wirklich aufgeben? Dann bist du der Durak.
leave-kept = Du spielst weiter.
welcome = <b>Durak</b>, das russische Kartenspiel, für deine Gruppe. Füge mich einer Gruppe hinzu und sende dort /newgame. Jeder bekommt seine Karten hier als Schaltflächen; der Tisch liegt in der Gruppe. Um hier gegen den Computer zu spielen, sende /practice; /howto erklärt die Regeln.
private-unknown = Ich verstehe nur Befehle: /help listet sie auf, und /practice startet hier ein Spiel gegen den Computer.
private-unknown-command = Diesen Befehl kenne ich nicht: /help listet meine auf.
group-hello = Hallo! Ich leite hier <b>Durak</b>-Partien. Sende /newgame, um eine zu eröffnen: Wer mitspielen will, tippt auf „Mitspielen“, und ich schicke jedem seine Karten privat. /help erklärt den Rest.
help-text =
    <b>Durak</b>
    <b>So läuft es hier:</b> /newgame in einer Gruppe eröffnet ein Spiel; tippe auf „Mitspielen“, dann auf „Starten“. Deine Karten kommen in den privaten Chat mit mir. Tippe auf eine Karte, um anzugreifen oder zu schlagen, auf „Aufnehmen“, um die Karten vom Tisch aufzunehmen, auf „Fertig“, wenn du nichts mehr zuwirfst, und auf „… weiterschieben“ (wenn erlaubt), um den Angriff weiterzugeben. Karten zwischen Punkten sind gerade nicht spielbar: Tippe darauf, um zu sehen, warum. Wer am Ende noch Karten hat, ist der Durak.
    <b>Befehle:</b> /howto so wird Durak gespielt · /rules die geltenden Regeln · /hand deine Karten noch einmal · /leave aufgeben (du bist der Durak) · /cancel das Spiel beenden (Eröffner oder Admin) · /stats Bestenliste und deine Bilanz · /settings Hausregeln (Admins) · /kick einen Spieler entfernen (Admins, als Antwort) · /practice gegen den Computer spielen (in unserem privaten Chat).

## /leave im privaten Chat (das eine laufende Gruppenspiel des Spielers: dort gefragt, in seiner Sprache)

leave-confirm-group = { $player }, willst du das Spiel in der Gruppe <b>{ $chat }</b> wirklich aufgeben? Dann bist du der Durak.
leave-no-game = Du spielst gerade in keinem Spiel mit.
leave-in-lobby-group = Das Spiel in der Gruppe <b>{ $chat }</b> hat noch nicht begonnen: Um deinen Platz freizugeben, tippe dort in der Lobby auf „Aussteigen“.
leave-done-private = Du hast aufgegeben und bist in diesem Spiel der Durak.

## So wird gespielt (/howto, die Schaltflächen „So wird gespielt“, und vor dem ersten Trainingsspiel eines Neulings)
## Eine Zeile pro Thema, zusammen ein Handybildschirm (höchstens 12 Zeilen, etwa 800 Zeichen:
## tests/bot/test_texts_fit.py misst sie); die Regeln, wie die Engine sie spielt (docs/rules.md).
## $low: ein Wert (6, 9, A).

howto-title = So wird Durak gespielt
howto-title-chat = So wird Durak in { $chat } gespielt
howto-goal = <b>Ziel:</b> Karten loswerden. Wer zuletzt welche hat, ist der Durak; gehen die letzten gleichzeitig weg: unentschieden.
howto-deal = <b>Deck:</b> { $cards }, { $low } bis Ass, je { $hand } pro Kopf; die Karte unterm Stapel ist Trumpf.
howto-first-redeal = Der niedrigste Trumpf beginnt (keiner da: neu geben).
howto-first-random = Der niedrigste Trumpf beginnt (keiner da: das Los entscheidet).
howto-beat = <b>Schlagen:</b> Eine höhere Karte derselben Farbe oder ein Trumpf schlägt: { $higher } schlägt { $lower }; ist { $suit } Trumpf, schlägt { $trump } das { $ace }.
howto-bout = <b>Runde:</b> Der Angreifer greift den linken Nachbarn an, der jede Karte schlägt oder aufnimmt.
howto-throw-in-all = <b>Zuwerfen:</b> Die anderen werfen Werte vom Tisch zu,
howto-throw-in-neighbours = <b>Zuwerfen:</b> Die zwei Nachbarn des Verteidigers werfen Werte vom Tisch zu,
howto-throw-in-neighbours_at_5 = <b>Zuwerfen:</b> Die anderen (ab 5 Spielern nur die Nachbarn des Verteidigers) werfen Werte vom Tisch zu,
howto-limit = bis { $max } Karten ({ $first } bis zur 1. Ablage), nie mehr, als der Verteidiger hatte.
howto-limit-flat = bis { $max } Karten, nie mehr, als der Verteidiger hatte.
howto-transfer = <b>Weiterschieben:</b> Vor dem Schlagen darf der Verteidiger denselben Wert dazulegen; dann verteidigt der Nächste gegen alle.
howto-show-trump = Den Trumpf dieses Werts zu zeigen genügt.
howto-beaten = <b>Alles geschlagen:</b> auf die Ablage, der Verteidiger greift an.
howto-taken = <b>Aufgenommen:</b> sein linker Nachbar.
howto-draw = Dann ziehen alle auf { $hand } nach, der Angreifer zuerst; bei leerem Stapel ist raus, wer keine Karten hat.
howto-exchange = <b>Trumpftausch:</b> Der niedrigste Trumpf (die { $low }) darf gegen den offenen getauscht werden.
howto-redeal = <b>Neu austeilen:</b> Wer vor der ersten Karte fünf einer Farbe und keinen Trumpf hat, darf es verlangen.
info-above = Steht gleich oben: Ich habe es eben erst geschickt.

## Fehler (Callback-Toasts: reiner Text, unter 200 Zeichen)

error-not-your-turn = Du bist nicht am Zug.
error-stale = Diese Schaltfläche ist veraltet; hier ist deine aktuelle Hand.
error-stale-shown = Zu spät: Das Spiel ist schon weiter. Deine Hand zeigt den aktuellen Stand.
error-stale-after = Zu spät: { $player } war schneller. Deine Hand zeigt den aktuellen Stand.
error-not-in-game = Du spielst in diesem Spiel nicht mit.
error-game-gone = Dieses Spiel ist vorbei.
error-lobby-closed = Diese Lobby ist geschlossen.
error-lobby-closed-newer = Diese Lobby ist geschlossen, aber in <b>{ $chat }</b> ist eine neue offen: Tippe dort auf „Mitspielen“.
error-anonymous = Du schreibst als Gruppe oder als Kanal, daher weiß ich nicht, wer du bist. Schreib unter deinem eigenen Namen, um zu spielen oder ein Spiel zu verwalten (Admins: „Anonym bleiben“ ausschalten).
error-no-game = Hier läuft gerade kein Spiel.
error-not-opener = Das dürfen nur der Spieler, der das Spiel eröffnet hat, und die Admins des Chats.
error-computers-opener = Computerspieler hinzufügen oder entfernen dürfen nur { $opener } (hat dieses Spiel eröffnet) und die Admins des Chats.
error-unknown-button = Diese Schaltfläche kenne ich nicht.
error-conflict = Im selben Moment hat sich etwas geändert; bitte tippe noch einmal.
error-storage = Das ließ sich gerade nicht speichern, es ist also nichts passiert. Bitte tippe noch einmal.
error-unavailable = Das ließ sich nicht speichern: Der Server des Bots kann im Moment keine Spiele speichern, es ist also nichts passiert. Bitte versuch es später noch einmal.
error-later = Der Bot kann das gerade nicht speichern. Es ist vorgemerkt und zählt, sobald er wieder speichern kann.
operator-database-down = ⚠️ Die Datenbank kann nichts speichern: { $cause }. Bis sie es wieder kann, antworte ich auf Tippen und Befehle mit „ließ sich nicht speichern“, und die Spiele warten. (Eine Nachricht pro Ausfall.)
operator-database-back = ✅ Die Datenbank speichert wieder, nach { $seconds } s und { $failures } gescheiterten Speicherungen; die Spiele gehen weiter.
error-game-over = Das Spiel ist vorbei.
error-unknown-player = Du spielst in diesem Spiel nicht mit.
error-player-out = Du bist in diesem Spiel schon raus.
leave-in-lobby = Das Spiel hat noch nicht begonnen: Um deinen Platz freizugeben, tippe in der Lobby auf „Aussteigen“.
error-card-not-in-hand = Diese Karte hast du nicht.
error-rank-not-on-table = Du kannst nur Karten zuwerfen, deren Wert schon auf dem Tisch liegt.
error-does-not-beat = Diese Karte schlägt keine offene Karte.
error-limit-reached = In dieser Runde passen keine Karten mehr auf den Tisch.
error-transfer-not-allowed = Du kannst jetzt nicht weiterschieben.
error-no-such-attack = Diese Karte ist kein offener Angriff.
error-cannot-take = Es gibt nichts aufzunehmen.
error-cannot-pass = Du kannst jetzt nicht „Fertig“ sagen.
error-exchange-not-allowed = Du kannst nicht gegen den Trumpf tauschen.
error-redeal-not-allowed = Du kannst kein neues Austeilen verlangen.

## Befehlsmenü

cmd-newgame = Neues Durak-Spiel starten
cmd-rules = Regeln anzeigen
cmd-hand = Meine Karten erneut schicken
cmd-leave = Das laufende Spiel aufgeben
cmd-cancel = Spiel abbrechen (Eröffner oder Admin)
cmd-help = Schaltflächen und Befehle
cmd-howto = So wird Durak gespielt
cmd-start = Unterhaltung mit mir beginnen

## Sandbox (the local page of `make sandbox`, bot/sandbox/static: plain text, no tags)

sandbox-title = Durak-Sandbox
sandbox-banner = Eine lokale Sandbox: Der Bot spielt gegen ein nachgebautes Telegram auf diesem Rechner. Nichts verlässt ihn.
sandbox-banner-real = Dein eigener Bot in Telegram: Token bei @BotFather holen, dann BOT_TOKEN=… make run
sandbox-group-title = Durak-Runde
sandbox-default-people = Anna, Ben
sandbox-group = Gruppe
sandbox-private = Privatchat
sandbox-people = Du spielst als
sandbox-add-person = Person hinzufügen
sandbox-name = Name
sandbox-full = Höchstens 6 Personen.
sandbox-restart = Bot neu starten
sandbox-bot-running = Bot läuft
sandbox-bot-starting = Bot startet…
sandbox-bot-stopped = Bot gestoppt
sandbox-message = Nachricht
sandbox-send = Senden
sandbox-start = Starten
sandbox-not-started = Du hast den Bot noch nicht gestartet.
sandbox-notifies = Diese Nachricht lässt das Handy klingeln
sandbox-edited = bearbeitet
sandbox-ok = OK
sandbox-open-table = Tisch öffnen
sandbox-close = Schließen
sandbox-gone = Diese Nachricht gibt es nicht mehr.
sandbox-offline = Die Sandbox antwortet nicht.

## /settings (Admins der Gruppe; vor dem Start auch der Eröffner der Lobby)

settings-title = Hausregeln
settings-intro = Zum Ändern antippen: gilt ab dem nächsten Spiel und in offener Lobby.
settings-closed = Die Hausregeln für die nächsten Spiele (/settings ändert sie):
use-in-group = Sende { $command } in der Gruppe <b>{ $chat }</b>, wo dieses Spiel läuft.
settings-saved = Gespeichert.
settings-menu-changed = Dieses Menü hat sich geändert: Tippe deine Wahl noch einmal an.
settings-close = Fertig
settings-seconds = { $seconds } s
settings-preset = Variante
settings-deck = Kartendeck
settings-transfer = Weiterschieben
settings-transfer-help = mit demselben Wert weitergeben
settings-show-trump = Trumpf zeigen
settings-show-trump-help = durch Zeigen weiterschieben
settings-throw-in = Zuwerfen
settings-throw-in-all = alle
settings-throw-in-neighbours = Nachbarn
settings-throw-in-neighbours_at_5 = Nachbarn ab 5
settings-first-bout = Bis 1. Ablage
settings-first-bout-help = Karten pro Runde bis dahin
settings-trump-exchange = Trumpftausch
settings-trump-exchange-help = niedrigster Trumpf gegen den offenen
settings-timeout = Zeit pro Zug
settings-timeout-help = danach spiele ich für dich; dreimal in Folge: Durak
settings-window = Zeit zum Zuwerfen
settings-window-help = danach endet die Runde
settings-language = Sprache
settings-computers = Computer in der Bestenliste
settings-alerts = Zug-Hinweise
settings-alerts-help = nach einer Pause als neue Nachricht
my-settings-title = Deine Einstellungen
my-settings-intro = Für jedes Spiel, das du spielst. Die Hausregeln einer Gruppe stellt man dort mit /settings ein.
my-settings-alerts-help = nach einer Pause kommt dein Zug als neue Nachricht, die dein Handy meldet; aus: deine Karten ändern sich nur lautlos
my-settings-alerts-y = Zug-Hinweise an
my-settings-alerts-n = Zug-Hinweise aus
my-settings-alerts-g = Je nach Gruppe
value-group-default = je nach Gruppe
language-en = English
language-de = Deutsch
language-ru = Русский
error-admins-only = Das dürfen nur die Admins des Chats (oder vor dem Start der Eröffner der Lobby).
error-admins-only-chat = Das dürfen nur die Admins des Chats ändern.
error-kick-admins = Nur die Admins des Chats können Spieler entfernen.
kick-already-out = Dieser Spieler ist nicht mehr im Spiel.

## Moderation

kick-how = Antworte mit /kick auf eine Nachricht eines Spielers aus dem laufenden Spiel.
kick-in-group = Spieler werden in ihrer Gruppe entfernt: Antworte dort mit /kick auf eine Nachricht des Spielers.
kick-confirm = { $player } aus dem Spiel entfernen? Wer entfernt wird, ist der Durak.
button-kick = { $player } entfernen
button-kick-no = Nein
kick-dropped = { $player } bleibt im Spiel.
result-kicked = { $player } wurde von einem Admin entfernt.
result-left = { $player } hat die Gruppe verlassen.
warn-time = ⏳ Die Hälfte deiner Zeit ist um: dein Zug in { $chat }, die Zeit läuft { $time } ab.

## /stats

stats-title = Bestenliste: { $chat }
stats-line = { $rank }. { $name }: { $rating } · { $tally }
stats-empty = In dieser Gruppe wurde noch kein Spiel zu Ende gespielt.
stats-footer = Die Zahl nach dem Namen ist das Rating, berechnet aus der Reihenfolge, in der die Spieler ihre Karten loswerden: 0 für neue Spieler, höher ist besser.
stats-provisional-note = „Vorläufig“: bisher weniger als { $min ->
        [one] { $min } Spiel
       *[other] { $min } Spiele
    }, das Rating schwankt noch stark.
stats-computer-mark = 🤖 Computerspieler
stats-player-title = Bilanz von { $name }
stats-overall = Alle Gruppen
stats-tally = { $games ->
        [one] { $games } Spiel
       *[other] { $games } Spiele
    }, { $durak ->
        [0] nie Durak
        [1] einmal Durak ({ $rate })
        [2] zweimal Durak ({ $rate })
       *[other] { $durak }-mal Durak ({ $rate })
    }
stats-run-clean = { $n ->
        [one] Im letzten Spiel nicht Durak
       *[other] { $n } Spiele in Folge nicht Durak
    }
stats-run-durak = { $n ->
        [one] Im letzten Spiel Durak
       *[other] { $n } Spiele in Folge Durak
    }
stats-rating-place = Rating { $rating } · Platz { $rank } von { $of } { $scope ->
        [group] in dieser Gruppe
       *[all] über alle Gruppen
    }
stats-rating = Rating { $rating }
stats-provisional = { $rating } (vorläufig)
stats-rating-note = Das Rating ergibt sich aus der Reihenfolge, in der die Spieler ihre Karten loswerden: 0 für neue Spieler, höher ist besser; vorläufig, solange es weniger als { $min ->
        [one] { $min } Spiel
       *[other] { $min } Spiele
    } sind.
stats-no-games = Noch keine abgeschlossenen Gruppenspiele (Training zählt nicht).
cmd-stats = Bestenliste und Bilanzen
cmd-settings = Hausregeln (Admins)
cmd-kick = Spieler entfernen (als Antwort, Admins)

## Computerspieler und Training

button-add-computer = Computer hinzufügen
button-remove-computer = Computer entfernen
lobby-computer-removed = Der zuletzt hinzugefügte Computerspieler hat den Tisch verlassen.
level-easy = leicht
level-medium = mittel
level-hard = schwer
computer-name = Computer { $n } ({ $level })
lobby-computer-added = Ein Computerspieler sitzt am Tisch.
lobby-need-human = Mindestens ein Mensch muss mitspielen.
lobby-too-many =
    { $extra ->
        [one] Zu viele Spieler für dieses Kartendeck: { $extra } Spieler muss gehen, oder ein Admin wählt in /settings ein größeres.
       *[other] Zu viele Spieler für dieses Kartendeck: { $extra } Spieler müssen gehen, oder ein Admin wählt in /settings ein größeres.
    }
lobby-pick-level = Wie stark soll der Computerspieler sein?
practice-intro = Trainiere gegen Computerspieler. Wie viele Gegner und wie stark?
practice-button = { $level }: { $count }
practice-title = Training
practice-running = Du spielst hier schon ein Trainingsspiel; spiel es zu Ende oder sende /cancel.
practice-in-private = Trainingsspiele laufen in unserem privaten Chat: Sende mir dort /practice.
cmd-practice = Gegen den Computer trainieren
error-not-your-button = Diese Schaltfläche ist für jemand anderen.
