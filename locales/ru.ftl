## Бот «Дурак» — русский (эталонный язык — en.ftl: каждый ключ оттуда должен быть и здесь,
## с теми же $переменными; это проверяет tests/test_locales.py).
##
## Сообщения отправляются с parse_mode=HTML: переменные приходят уже экранированными;
## не пиши голые "<" и "&" (используй &lt; и &amp; или только допустимые теги Telegram).
## Числа ($count, $min, ...) — int: множественное число выбирай через
## { $count -> [one] ... [few] ... [many] ... *[other] ... }:
## one (1, 21), few (2–4, 22), many (0, 5–20, 11), other (дроби).
## Всплывающие уведомления (error-*, lobby-joined, ...) — простой текст: без тегов.

## Количества

cards-count =
    { $count ->
        [one] { $count } карта
        [few] { $count } карты
        [many] { $count } карт
       *[other] { $count } карты
    }
players-count =
    { $count ->
        [one] { $count } игрок
        [few] { $count } игрока
        [many] { $count } игроков
       *[other] { $count } игрока
    }

## Лобби

lobby-title = Дурак: новая игра
lobby-created = { $name } хочет сыграть в дурака. Нажми «Играть», чтобы сесть за стол.
lobby-opened-by = Создатель: { $name }.
lobby-opener-join = { $name }, нажми «Играть», чтобы тоже сесть за стол.
lobby-players = Игроки ({ $count }/{ $max }): { $names }
lobby-nobody = пока никого
lobby-invited = Приглашены: { $names } — чтобы сесть за стол, нажми «Играть».
lobby-invited-again = Ждём: { $names } — кнопка «Играю ещё» под результатом или «Играть» здесь.
lobby-again-starts = Игра начнётся сама, когда соберутся все, или через минуту после первого нажатия, если за столом хотя бы двое.
lobby-need-players =
    { $min ->
        [one] Для начала нужен хотя бы { $min } игрок.
        [few] Для начала нужно хотя бы { $min } игрока.
        [many] Для начала нужно хотя бы { $min } игроков.
       *[other] Для начала нужно хотя бы { $min } игрока.
    }
lobby-joined = Ты за столом. Карты пришлю тебе в личные сообщения.
lobby-already-joined = Ты уже за столом.
lobby-not-joined = Тебя нет в этом лобби.
lobby-left = Ты больше не в лобби.
lobby-full = Все места заняты.
lobby-started = Игра началась.
lobby-cancelled = Это лобби отменено.
lobby-expired = Никто не начал игру вовремя — лобби закрыто.
lobby-moved = Это лобби продолжается в сообщении ниже.
lobby-again = Ты в игре. Следующая игра начнётся, когда соберутся все, или через минуту после первого нажатия, если за столом хотя бы двое.
again-left-out = Следующая игра в «{ $chat }» началась без тебя. В следующую можно попасть через /newgame в группе.
again-started = Следующая игра уже началась.
again-stale = Эта кнопка от прошлой игры и уже ничего не открывает. Новая игра: /newgame.
again-not-player = Здесь отмечаются только игроки этой партии. Чтобы сыграть, нажми «Играть» в лобби, когда оно откроется, или отправь /newgame.
newgame-lobby-open = Здесь уже собирается игра — присоединяйся выше.
again-lobby-open = Ниже уже собирается новая игра — присоединяйся там.
newgame-running = Здесь уже идёт игра. Дождись её конца или отмени через /cancel.
newgame-in-group = В дурака играют в группах: добавь меня в группу (кнопка ниже) и отправь там /newgame. Сыграть с компьютером прямо здесь: /practice.
private-joined = Ты за столом в группе «<b>{ $chat }</b>». Твои карты появятся здесь.
private-lobby-cancelled = Игру в группе «<b>{ $chat }</b>» отменили до начала.
private-lobby-expired = Игра в группе «<b>{ $chat }</b>» не началась вовремя; лобби закрыто.
join-not-member = Играть в группе «<b>{ $chat }</b>» могут только её участники. Вступи в группу и нажми там «Играть».
group-blocked = Не могу отправить карты игроку { $player }: бот заблокирован или ещё не запущен. Открой { $link }, нажми «Запустить» (или «Перезапустить», если бот был заблокирован), затем отправь /hand. До тех пор я хожу за этого игрока, когда его время выходит; на третий раз подряд он проигрывает.
group-blocked-no-limit = Не могу отправить карты игроку { $player }: бот заблокирован или ещё не запущен. Открой { $link }, нажми «Запустить» (или «Перезапустить», если бот был заблокирован), затем отправь /hand. До тех пор игра ждёт этого игрока (ограничения времени нет); админ может исключить игрока командой /kick в ответ на его сообщение.
game-cancelled = Игра отменена. Результат не засчитан.

## Правила

rules-title = Правила
rules-title-chat = Правила игры в группе «{ $chat }»
rules-title-practice = Правила тренировочной партии
rules-preset = Вариант: { $preset }
rules-deck =
    { $count ->
        [one] Колода: { $count } карта
        [few] Колода: { $count } карты
        [many] Колода: { $count } карт
       *[other] Колода: { $count } карты
    }
rules-throw-in = Кто может подкидывать: { $mode }
rules-first-bout =
    { $count ->
        [one] До первого отбоя: не больше { $count } карты за раунд
        [few] До первого отбоя: не больше { $count } карт за раунд
        [many] До первого отбоя: не больше { $count } карт за раунд
       *[other] До первого отбоя: не больше { $count } карт за раунд
    }
rules-transfer = Переводы (переводной дурак): { $value }
rules-show-trump = Перевод показом козыря: { $value }
rules-trump-exchange = Обмен младшего козыря на открытый козырь: { $value }
rules-redeal = Игрок с пятью и более картами одной масти и без единого козыря может попросить пересдачу: { $value }
rules-timeout = Время на ход: { $seconds } с
rules-no-timeout = Без ограничения времени на ход
rules-summary = Правила: { $preset } · { $cards } · переводы { $transfers } — все: /rules
value-on = вкл.
value-off = выкл.
preset-classic = классический
preset-perevodnoy = переводной
preset-online = онлайн
preset-short = короткий (32 карты)
preset-custom = свой
throw-in-all = все
throw-in-neighbours = соседи отбивающегося
throw-in-neighbours_at_5 = все, а при 5 и более игроках — только соседи

## Кнопки

button-join = Играть
button-leave = Выйти
button-start = Начать
button-cancel = Отмена
button-take = Взять
button-pass = Бито
button-pass-take = Пас
button-transfer = Перевести { $card }
button-show-trump = Показать { $card } и перевести
button-exchange = Обменять на козырь
button-redeal = Попросить пересдачу
button-cover = Побить { $attack } картой { $card }
button-back = Назад
button-resign = Да, сдаюсь
button-play-on = Нет, играю дальше
button-again = Играю ещё
button-open-hand = Мои карты
button-add-to-group = Добавить в группу
button-rules = Правила
button-howto = Как играть

## Стол (группа)

table-title = Дурак
table-trump = Козырь { $card } · колода { $stock } · отбой { $discard }
table-empty = На столе пусто.
table-waiting = Ждём: { $names }.
table-window = ⏳ В отбой { $time }, если никто не подкинет.
table-window-take = ⏳ { $player } забирает всё { $time }, если никто не подкинет.
table-waiting-until = ⏳ Ждём: { $names }, время выйдет { $time }.
table-last-beaten = Прошлый раунд: в отбой { $cards }
table-last-picked = Прошлый раунд: { $player } забирает { $cards }
time-at = в { $time } UTC
seat-out = вне игры
seat-draws = доберёт после раунда
seat-takes = берёт
seat-passed = бито
seat-passed-take = пас
seat-may-add = может подкинуть
seat-durak = дурак

## Mini App (стол в картинках рядом с чатом: bot/miniapp; app-* уходят на страницу как есть,
## с подстановками { $name }, которые заполняет страница: простой текст, без множественных форм)

button-app-table = Стол
button-app-hand = Открыть стол
app-no-game = Здесь нет игры.
app-refused-forged = Не удалось проверить эту ссылку. Открой стол кнопкой бота ещё раз.
app-refused-expired = Срок действия ссылки истёк. Открой стол кнопкой бота ещё раз.
app-refused-missing = Открой стол кнопкой бота в Telegram.
app-unavailable = Стол перезапускается, подожди немного…
app-busy = Открыто слишком много столов. Закрой один и попробуй снова.
app-bad-request = Не получилось. Попробуй ещё раз.
app-reconnecting = Переподключаемся…
app-your-turn = Твой ход
app-choose = Как сыграть?
app-stock = Колода
app-discard = Отбой
app-trump = Козырь
app-onlooker = Ты зритель: свои карты видят только игроки.
app-result = Игра окончена
app-soon = совсем скоро

## Mini App page (сама страница: bot/miniapp/static/app.js; простой текст)

app-page-title = Дурак
app-page-you = ты
app-page-role-attacker = ходит
app-page-role-defender = отбивается
app-page-role-thrower = подкидывает
app-page-role-out = вне игры
app-page-table-empty = На столе пусто.
app-page-cancel = Отмена
app-page-failed = Нет ответа. Попробуй ещё раз.

## Mini App page: стол, который больше нельзя показать (поток событий отклонён окончательно)

app-page-ended = Эта игра закончилась или её больше нет.
app-page-expired = Сеанс истёк. Открой стол заново из чата.
app-page-too-many = Открыто слишком много столов. Закрой один и открой этот снова.

## Mini App page: место компьютера (его значок 🤖, его читают экранные дикторы)

app-page-computer = компьютерный игрок

## Рука (личный чат)

hand-title = Дурак · <b>{ $chat }</b>
hand-title-practice = Дурак: <b>тренировка</b>
hand-table = Стол:
hand-you-open = Твой ход: ходи любой картой, отбивается { $player }.
hand-they-open = { $player } ходит, отбивается { $target }.
hand-you-attack = Ты ходишь, отбивается { $player }.
hand-you-defend = { $player } ходит под тебя: нажми на карту, чтобы побить, или бери.
hand-you-defend-transfer = { $player } ходит под тебя: нажми на карту, чтобы побить, переведи кнопкой ниже или бери.
hand-you-take = Ты берёшь. Остальные ещё могут подкинуть.
hand-you-take-one = Ты берёшь. { $player } ещё может подкинуть.
hand-you-are-attacked = { $player } ходит под тебя: жди первую карту.
hand-you-covered = Всё побито. Остальные ещё могут подкинуть.
hand-you-covered-one = Всё побито. { $player } ещё может подкинуть.
hand-you-may-add = Можешь подкинуть карту того же достоинства, что есть на столе, или нажми «Бито».
hand-you-may-add-take = { $player } берёт. Можешь ещё подкинуть карту того же достоинства, что есть на столе, или нажми «Пас».
hand-you-may-add-now = Можешь подкинуть карту того же достоинства, что есть на столе.
hand-you-are-out = Карт больше нет — ты вне игры. Отличная игра!
hand-time-left = ⏳ Твоё время выйдет { $time }.
hand-window = В отбой { $time }: нажми на карту, чтобы подкинуть, или на «Бито».
hand-window-take = { $player } забирает всё { $time }: нажми на карту, чтобы подкинуть, или на «Пас».
hand-timed-out = Время вышло, и я сходил за тебя ({ $count } из { $max } подряд; на { $max }-й раз ты останешься в дураках).
hand-choose = Какой ход?
hand-confirm-transfer = Перевести? Тогда отбивается { $player }.
hand-empty = У тебя нет карт.
hand-last-cards = Твои последние карты: { $cards }
hand-result-you-durak = Ты остаёшься в дураках.
hand-result-place = Твоё место: { $place } из { $count }.
hand-cancelled = Эта игра отменена.
hand-replaced = Твои карты — в новом сообщении ниже.
hand-bot-removed = Меня удалили из группы — игра окончена.

## События (последние ходы за столом)

log-attack = { $player } ходит
log-add = { $player } подкидывает
log-defend = { $player } отбивает карту
log-transfer = { $player } переводит, теперь отбивается { $target }
log-show = { $player } показывает козырь и переводит, теперь отбивается { $target }
log-take = { $player } берёт
log-pass = { $player } больше не подкидывает
log-beaten =
    { $count ->
        [one] В отбой уходит { $count } карта
        [few] В отбой уходят { $count } карты
        [many] В отбой уходят { $count } карт
       *[other] В отбой уходят { $count } карты
    }
log-picked =
    { $count ->
        [one] { $player } забирает { $count } карту
        [few] { $player } забирает { $count } карты
        [many] { $player } забирает { $count } карт
       *[other] { $player } забирает { $count } карты
    }
log-out = { $player } выходит из игры
log-exchange = { $player } меняет младший козырь на открытый
log-resign = { $player } сдаётся
log-redeal = { $player } просит пересдачу; карты сданы заново
log-timeout = { $player }: время вышло
log-removed = { $player } выбывает: трижды подряд вышло время
log-kicked = Админ исключил игрока { $player }
log-left = { $player } выходит из группы и выбывает
# The same events, naming the cards they made public (one line per bout on the table)
log-attack-cards = { $player } ходит: { $cards }
log-add-cards = { $player } подкидывает { $cards }
log-defend-cards = { $player } бьёт { $attack } картой { $card }
log-transfer-cards = { $player } переводит картой { $cards }, теперь отбивается { $target }
log-show-cards = { $player } показывает { $cards } и переводит, теперь отбивается { $target }
log-beaten-cards = в отбой: { $cards }
log-picked-cards = { $player } забирает { $cards }
log-exchange-cards = { $player } меняет { $card } на открытый козырь { $trump }

## Конец игры

result-title = Игра окончена
result-durak = В дураках — { $player }.
result-draw = Ничья: последние карты ушли со стола одновременно.
result-resigned = Игрок { $player } сдался.
result-timed-out = Игрок { $player } исключён за бездействие.
result-order = Вышли из игры по порядку:
result-bouts =
    { $count ->
        [one] { $count } раунд
        [few] { $count } раунда
        [many] { $count } раундов
       *[other] { $count } раунда
    }
result-evening = Сегодня вместе сыграли { $games ->
        [one] { $games } игру
        [few] { $games } игры
        [many] { $games } игр
       *[other] { $games } игры
    } — сколько раз в дураках: { $tally }
result-evening-durak = { $player } { $count }
result-evening-draws = { $count ->
        [one] { $count } ничья
        [few] { $count } ничьи
        [many] { $count } ничьих
       *[other] { $count } ничьи
    }

## /leave, /start, /help

leave-confirm = { $player }, точно сдаёшься? Тогда дураком останешься ты.
leave-confirm-practice = { $player }, точно сдаёшься в этой тренировочной партии? Тогда дураком останешься ты.
leave-kept = Играешь дальше.
welcome = <b>Дурак</b> — карточная игра для твоей группы. Добавь меня в группу и отправь там /newgame. Свои карты каждый видит здесь, в виде кнопок, а стол — в группе. Чтобы сыграть здесь против компьютера, отправь /practice; /howto объяснит правила.
private-unknown = Я понимаю только команды: /help покажет их список, а /practice начнёт здесь игру против компьютера.
private-unknown-command = Я не знаю такой команды: /help покажет мои.
group-hello = Привет! Я провожу здесь партии в <b>дурака</b>. Отправь /newgame, чтобы открыть игру: кто хочет играть, нажимает «Играть», и я присылаю каждому его карты в личные сообщения. /help расскажет остальное.
help-text =
    <b>Дурак</b>
    <b>Как всё устроено:</b> /newgame в группе открывает игру; нажми «Играть», затем «Начать». Карты приходят в личный чат со мной. Нажми на карту, чтобы пойти или побить, «Взять» — чтобы забрать карты со стола, «Бито» или «Пас» — когда больше не подкидываешь, «Перевести» (в переводном дураке) — чтобы перевести карты на следующего игрока. Карты между точками сейчас сыграть нельзя: нажми на такую, чтобы узнать почему. Кто в конце остался с картами — дурак.
    <b>Команды:</b> /howto как играть в дурака · /rules действующие правила · /hand прислать карты ещё раз · /leave сдаться (останешься в дураках) · /cancel завершить игру (создатель или админ) · /stats рейтинг и твоя статистика · /settings правила группы (админы) · /kick исключить игрока (админы, ответом на его сообщение) · /practice сыграть против компьютера (в личном чате со мной).

## /leave в личном чате (единственная идущая игра игрока в группе: вопрос там же, на его языке)

leave-confirm-group = { $player }, сдаёшься в группе «<b>{ $chat }</b>»? Тогда дураком останешься ты.
leave-no-game = Сейчас ты ни в одной игре не участвуешь.
leave-in-lobby-group = Игра в группе «<b>{ $chat }</b>» ещё не началась: чтобы освободить место, нажми «Выйти» в её лобби.
leave-done-private = Ты в дураках: игра для тебя закончена.

## Как играть (/howto, кнопки «Как играть» и перед первой тренировкой новичка)
## По строке на тему, всё вместе — один экран телефона (не больше 12 строк, около 800 символов:
## их измеряет tests/bot/test_texts_fit.py); правила так, как их играет движок (docs/rules.md).
## $low: достоинство (6, 9, A).

howto-title = Как играть в дурака
howto-title-chat = Как играть в дурака · { $chat }
howto-goal = <b>Цель:</b> избавиться от карт. Последний с картами — дурак; если последние карты ушли одновременно — ничья.
howto-deal = <b>Колода:</b> { $cards }, от { $low } до туза, каждому по { $hand }; карта под колодой — козырь.
howto-first-redeal = Первым ходит младший козырь (ни у кого нет — пересдача).
howto-first-random = Первым ходит младший козырь (ни у кого нет — по жребию).
howto-beat = <b>Что чем бить:</b> старшей картой той же масти, некозырную — любым козырем: { $higher } бьёт { $lower }; если козыри — { $suit }, то { $trump } бьёт { $ace }.
howto-bout = <b>Раунд:</b> нападающий ходит под соседа слева, тот отбивает каждую карту или берёт.
howto-throw-in-all = <b>Подкидывание:</b> остальные подкидывают карты того же достоинства, что на столе:
howto-throw-in-neighbours = <b>Подкидывание:</b> двое соседей отбивающегося подкидывают карты того же достоинства, что на столе:
howto-throw-in-neighbours_at_5 = <b>Подкидывание:</b> остальные (при 5 и более игроках — соседи отбивающегося) подкидывают карты того же достоинства, что на столе:
howto-limit = до { $max } карт за раунд (до первого отбоя — { $first }), не больше, чем у отбивающегося.
howto-limit-flat = до { $max } карт за раунд, не больше, чем у отбивающегося.
howto-transfer = <b>Перевод:</b> пока ничего не отбито, отбивающийся может положить карту того же достоинства — тогда отбивается следующий.
howto-show-trump = Можно и просто показать козырь этого достоинства.
howto-beaten = <b>Бито:</b> карты в отбой, ходит отбивавшийся.
howto-taken = <b>Взял:</b> ходит игрок после него.
howto-draw = Потом все добирают до { $hand } карт, первым нападавший; когда колода пуста, игрок без карт выходит.
howto-exchange = <b>Обмен козыря:</b> младший козырь ({ $low }) можно обменять на открытый.
howto-redeal = <b>Пересдача:</b> до первой карты её может попросить игрок с пятью картами одной масти и без козырей.
info-above = Это сообщение чуть выше: я только что его отправил.

## Ошибки (всплывающие уведомления: простой текст, до 200 символов)

error-not-your-turn = Сейчас не твой ход.
error-stale = Эта кнопка устарела — вот твои текущие карты.
error-stale-shown = Поздно: игра уже ушла вперёд. Твои карты показывают, что сейчас на столе.
error-stale-after = Поздно: игрок { $player } сходил раньше. Твои карты показывают, что сейчас на столе.
error-not-in-game = Ты не участвуешь в этой игре.
error-game-gone = Эта игра уже закончилась.
error-lobby-closed = Это лобби закрыто.
error-lobby-closed-newer = Это лобби закрыто, но в группе «<b>{ $chat }</b>» открыто новое: нажми там «Играть».
error-anonymous = Ты пишешь от имени группы или канала, поэтому я не знаю, кто ты. Чтобы играть или управлять игрой, пиши от своего имени (если ты админ, выключи «Анонимность»).
error-no-game = Здесь сейчас нет игры.
error-not-opener = Это может сделать только создатель игры или админ чата.
error-computers-opener = Добавлять и убирать компьютерных игроков могут только { $opener } (создатель игры) и админы чата.
error-unknown-button = Не знаю такой кнопки.
error-conflict = В этот же момент что-то изменилось — нажми ещё раз.
error-storage = Сейчас не удалось это сохранить, поэтому ничего не изменилось. Нажми ещё раз.
error-unavailable = Это не удалось сохранить: сервер бота сейчас не может сохранять игры, поэтому ничего не изменилось. Попробуй ещё раз позже.
error-later = Бот сейчас не может это сохранить. Действие запомнено и засчитается, как только бот снова сможет сохранять.
operator-database-down = ⚠️ База данных ничего не может сохранить: { $cause }. Пока это так, на нажатия и команды бот отвечает «не удалось сохранить», а игры ждут. (Одно сообщение на сбой.)
operator-database-back = ✅ База данных снова сохраняет: сбой длился { $seconds } с, неудачных сохранений: { $failures }; игры продолжаются.
error-game-over = Игра окончена.
error-unknown-player = Ты не участвуешь в этой игре.
error-player-out = Ты уже вне игры.
leave-in-lobby = Игра ещё не началась: чтобы освободить место, нажми «Выйти» в лобби.
error-card-not-in-hand = У тебя нет этой карты.
error-rank-not-on-table = Подкидывать можно только карты того достоинства, что уже есть на столе.
error-does-not-beat = Эта карта не бьёт ни одну открытую карту.
error-limit-reached = В этом раунде больше подкидывать нельзя: стол заполнен.
error-transfer-not-allowed = Сейчас перевести нельзя.
error-no-such-attack = Такой непобитой карты на столе нет.
error-cannot-take = Брать нечего.
error-cannot-pass = Сейчас нельзя пасовать.
error-exchange-not-allowed = Обменять на козырь нельзя.
error-redeal-not-allowed = Попросить пересдачу нельзя.

## Меню команд

cmd-newgame = Начать новую игру в дурака
cmd-rules = Показать правила
cmd-hand = Прислать мои карты ещё раз
cmd-leave = Сдаться в текущей игре
cmd-cancel = Отменить игру (создатель или админ)
cmd-help = Кнопки и команды
cmd-howto = Как играть в дурака
cmd-start = Начать общение со мной

## Sandbox (the local page of `make sandbox`, bot/sandbox/static: plain text, no tags)

sandbox-title = Песочница «Дурака»
sandbox-banner = Локальная песочница: бот играет с имитацией Telegram на этом компьютере. Ничего не уходит наружу.
sandbox-banner-real = Свой бот в Telegram: получи токен у @BotFather и запусти BOT_TOKEN=… make run
sandbox-group-title = Клуб «Дурак»
sandbox-default-people = Аня, Борис
sandbox-group = Группа
sandbox-private = Личный чат
sandbox-people = Играешь за
sandbox-add-person = Добавить человека
sandbox-name = Имя
sandbox-full = Не больше 6 человек.
sandbox-restart = Перезапустить бота
sandbox-bot-running = Бот работает
sandbox-bot-starting = Бот запускается…
sandbox-bot-stopped = Бот остановлен
sandbox-message = Сообщение
sandbox-send = Отправить
sandbox-start = Запустить
sandbox-not-started = Бот ещё не запущен.
sandbox-notifies = Телефон оповестит об этом сообщении
sandbox-edited = изменено
sandbox-ok = OK
sandbox-open-table = Открыть стол
sandbox-close = Закрыть
sandbox-gone = Этого сообщения больше нет.
sandbox-offline = Песочница не отвечает.

## /settings (админы группы; до начала игры — и создатель лобби)

settings-title = Правила группы
settings-intro = Нажми, чтобы изменить: со следующей игры и в открытом лобби.
settings-closed = Правила группы для следующих игр (изменить: /settings):
use-in-group = Отправь { $command } в группе «<b>{ $chat }</b>», где идёт эта игра.
settings-saved = Сохранено.
settings-menu-changed = Это меню изменилось: выбери ещё раз.
settings-close = Готово
settings-seconds = { $seconds } с
settings-preset = Вариант
settings-deck = Колода
settings-transfer = Переводы
settings-transfer-help = перевод картой того же достоинства
settings-show-trump = Показ козыря
settings-show-trump-help = перевод показом козыря
settings-throw-in = Подкидывание
settings-throw-in-all = все
settings-throw-in-neighbours = соседи
settings-throw-in-neighbours_at_5 = соседи при 5+
settings-first-bout = Первый отбой
settings-first-bout-help = карт за раунд до него
settings-trump-exchange = Обмен козыря
settings-trump-exchange-help = младший козырь меняется на открытый
settings-timeout = Время на ход
settings-timeout-help = потом хожу я; три раза подряд — проигрыш
settings-window = Время подкинуть
settings-window-help = потом раунд заканчивается сам
settings-language = Язык
settings-computers = Компьютеры в рейтинге
settings-alerts = Уведомления о ходе
settings-alerts-help = ход после паузы приходит новым сообщением
my-settings-title = Твои настройки
my-settings-intro = Для всех твоих игр. Правила группы настраиваются в ней командой /settings.
my-settings-alerts-help = после паузы твой ход приходит новым сообщением, и телефон о нём напомнит; выкл.: карты тихо обновляются
my-settings-alerts-y = Уведомлять
my-settings-alerts-n = Не уведомлять
my-settings-alerts-g = Как решит группа
value-group-default = как решит группа
language-en = English
language-de = Deutsch
language-ru = Русский
error-admins-only = Это могут только админы чата (или создатель лобби до начала игры).
error-admins-only-chat = Это могут менять только админы чата.
error-kick-admins = Исключить игрока могут только админы чата.
kick-already-out = Этого игрока уже нет в игре.

## Модерация

kick-how = Ответь командой /kick на сообщение игрока из текущей игры.
kick-in-group = Игроков исключают в их группе: ответь там на сообщение игрока командой /kick.
kick-confirm = Исключить игрока { $player } из игры? Исключённый остаётся в дураках.
button-kick = Исключить игрока { $player }
button-kick-no = Нет
kick-dropped = { $player } остаётся в игре.
result-kicked = Игрока { $player } исключил админ.
result-left = Игрок { $player } покинул группу.
warn-time = ⏳ Половина времени прошла: твой ход в группе «{ $chat }», время выйдет { $time }.

## /stats

stats-title = Таблица лидеров: { $chat }
stats-line = { $rank }. { $name }: { $rating } · { $tally }
stats-empty = В этой группе пока нет доигранных игр.
stats-footer = Число после имени — рейтинг; он считается по порядку, в котором игроки избавляются от карт: у новичка 0, чем выше, тем лучше.
stats-provisional-note = «Предварительный»: сыграно меньше { $min ->
        [one] { $min } игры
        [few] { $min } игр
        [many] { $min } игр
       *[other] { $min } игры
    }, рейтинг ещё сильно меняется.
stats-computer-mark = 🤖 компьютерный игрок
stats-player-title = Статистика игрока { $name }
stats-overall = Все группы
stats-tally = { $games ->
        [one] { $games } игра
        [few] { $games } игры
        [many] { $games } игр
       *[other] { $games } игры
    }, { $durak ->
        [0] ни разу в дураках
        [one] в дураках { $durak } раз ({ $rate })
        [few] в дураках { $durak } раза ({ $rate })
        [many] в дураках { $durak } раз ({ $rate })
       *[other] в дураках { $durak } раза ({ $rate })
    }
stats-run-clean = { $n ->
        [1] В последней игре — не в дураках
        [one] Не в дураках { $n } игру подряд
        [few] Не в дураках { $n } игры подряд
        [many] Не в дураках { $n } игр подряд
       *[other] Не в дураках { $n } игры подряд
    }
stats-run-durak = { $n ->
        [1] В последней игре — в дураках
        [one] В дураках { $n } игру подряд
        [few] В дураках { $n } игры подряд
        [many] В дураках { $n } игр подряд
       *[other] В дураках { $n } игры подряд
    }
stats-rating-place = Рейтинг { $rating } · место { $rank } из { $of } { $scope ->
        [group] в этой группе
       *[all] во всех группах
    }
stats-rating = Рейтинг { $rating }
stats-provisional = { $rating } (предварительный)
stats-rating-note = Рейтинг считается по порядку, в котором игроки избавляются от карт: у новичка 0, чем выше, тем лучше; до { $min ->
        [one] { $min } игры
        [few] { $min } игр
        [many] { $min } игр
       *[other] { $min } игры
    } он предварительный.
stats-no-games = Пока нет доигранных игр в группах (тренировки не учитываются).
cmd-stats = Таблица лидеров и статистика
cmd-settings = Правила группы (админы)
cmd-kick = Исключить игрока (ответом, админы)

## Компьютерные игроки и тренировка

button-add-computer = Добавить компьютер
button-remove-computer = Убрать компьютер
lobby-computer-removed = Последний добавленный компьютер покинул стол.
level-easy = лёгкий
level-medium = средний
level-hard = сильный
computer-name = Компьютер { $n } ({ $level })
lobby-computer-added = Компьютерный игрок за столом.
lobby-need-human = Играть должен хотя бы один человек.
lobby-too-many =
    { $extra ->
        [one] Для этой колоды слишком много игроков: должен выйти { $extra } игрок, или админ выберет колоду побольше в /settings.
        [few] Для этой колоды слишком много игроков: должны выйти { $extra } игрока, или админ выберет колоду побольше в /settings.
        [many] Для этой колоды слишком много игроков: должны выйти { $extra } игроков, или админ выберет колоду побольше в /settings.
       *[other] Для этой колоды слишком много игроков: должны выйти { $extra } игроков, или админ выберет колоду побольше в /settings.
    }
lobby-pick-level = Насколько сильным должен быть компьютер?
practice-intro = Тренировка против компьютера. Сколько соперников и какой силы?
practice-button = { $level }: { $count }
practice-title = Тренировка
practice-running = Ты уже играешь здесь тренировочную партию: доиграй её или отправь /cancel.
practice-in-private = Тренировки проходят в нашем личном чате: отправь мне там /practice.
cmd-practice = Тренировка против компьютера
error-not-your-button = Эта кнопка для другого игрока.
