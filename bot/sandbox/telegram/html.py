"""Telegram's HTML parse mode, re-implemented after TDLib's ``parse_html``.

``parse_html(source)`` returns the plain text and the entity list Telegram would store
(offsets and lengths in UTF-16 code units, as in the Bot API), or raises
:class:`HtmlParseError` with the text Telegram puts after ``"can't parse entities: "``.

``strict=True`` (the default used by the fake) is *stricter than Telegram* in two ways,
so that missing ``html.escape`` calls are caught in tests even when Telegram would
let them through:

* a bare ``&`` that does not start ``&lt;`` ``&gt;`` ``&amp;`` ``&quot;`` or a numeric
  reference ending in ``;`` is an error (Telegram keeps it as a literal ``&``);
* an attribute a tag does not support (``<b class="x">``) is an error (Telegram ignores it).

With ``strict=False`` the behaviour follows TDLib.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ALLOWED_TAGS", "HtmlParseError", "parse_html", "strip_text", "utf16_len"]

ALLOWED_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "span",
        "tg-spoiler",
        "tg-emoji",
        "tg-time",
        "code",
        "pre",
        "blockquote",
    }
)
_ENTITY_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "span": "spoiler",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "tg-time": "date_time",
    "a": "text_link",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_SPACES = frozenset(" \t\r\n\v\f")
_NAME_TOKEN = re.compile(r"[A-Za-z0-9.\-]*")
_TIME_FORMAT = re.compile(r"r|w?[dD]?[tT]?")
"""The Bot API's date-time entity formatting: "r" (relative) alone, or any of a weekday
("w"), a date ("d" short, "D" long) and a time ("t" short, "T" with seconds), in that
order; empty: the text as written."""


class HtmlParseError(ValueError):
    """Raised for markup Telegram refuses; ``str(exc)`` is Telegram's reason."""


@dataclass
class _Open:
    tag: str
    argument: str
    start: int  # UTF-16 offset in the output
    byte_offset: int


_SPECIAL = re.compile("[<&]")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _byte_offset(source: str, pos: int) -> int:
    return len(source[:pos].encode("utf-8"))


def _decode_entity(source: str, pos: int, *, strict: bool) -> tuple[str, int] | None:
    """Decode an HTML entity at ``source[pos] == '&'``; return (char, next_pos) or None."""
    n = len(source)
    end = pos + 1
    if end < n and source[end] == "#":
        end += 1
        digits_start = end
        if end < n and source[end] in "xX":
            end += 1
            digits_start = end
            while end < n and source[end] in "0123456789abcdefABCDEF":
                end += 1
            digits = source[digits_start:end]
            code = int(digits, 16) if digits else 0
        else:
            while end < n and source[end].isdigit() and source[end].isascii():
                end += 1
            digits = source[digits_start:end]
            code = int(digits) if digits else 0
        if code == 0 or code >= 0x10FFFF or end - pos >= 10 or 0xD800 <= code <= 0xDFFF:
            return None
        char = chr(code)
    else:
        while end < n and source[end].isascii() and source[end].isalpha():
            end += 1
        name = source[pos + 1 : end]
        if name not in _NAMED_ENTITIES:
            return None
        char = _NAMED_ENTITIES[name]
    if end < n and source[end] == ";":
        return char, end + 1
    if strict:
        return None
    return char, end


def _skip_spaces(source: str, i: int) -> int:
    while i < len(source) and source[i] in _SPACES:
        i += 1
    return i


def parse_html(source: str, *, strict: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """Parse Telegram HTML. Returns (plain text, entities) before whitespace trimming."""
    out: list[str] = []
    out_len = 0  # UTF-16 length of ``out``
    stack: list[_Open] = []
    entities: list[dict[str, Any]] = []
    n = len(source)
    i = 0
    while i < n:
        char = source[i]
        if char == "&":
            decoded = _decode_entity(source, i, strict=strict)
            if decoded is not None:
                out.append(decoded[0])
                out_len += utf16_len(decoded[0])
                i = decoded[1]
                continue
            if strict:
                raise HtmlParseError(
                    f"Character '&' must be escaped as &amp; at byte offset "
                    f"{_byte_offset(source, i)} (strict fake check)"
                )
        if char != "<":  # plain text up to the next tag or entity, in one piece
            special = _SPECIAL.search(source, i + 1)
            end = special.start() if special else n
            out.append(source[i:end])
            out_len += utf16_len(out[-1])
            i = end
            continue

        begin = i
        begin_bytes = _byte_offset(source, begin)
        i += 1
        if i >= n or source[i] != "/":
            # opening tag
            j = i
            while j < n and source[j] not in _SPACES and source[j] != ">":
                j += 1
            tag = source[i:j].lower()
            if tag not in ALLOWED_TAGS:
                raise HtmlParseError(f'Unsupported start tag "{tag}" at byte offset {begin_bytes}')
            i = j
            argument = ""
            while True:
                i = _skip_spaces(source, i)
                if i >= n:
                    raise HtmlParseError(f"Unclosed start tag at byte offset {begin_bytes}")
                if source[i] == ">":
                    i += 1
                    break
                name_start = i
                while i < n and source[i] not in _SPACES and source[i] not in "=>":
                    i += 1
                name = source[name_start:i].lower()
                if not name:
                    raise HtmlParseError(
                        f'Empty attribute name in the tag "{tag}" at byte offset {begin_bytes}'
                    )
                i = _skip_spaces(source, i)
                if i >= n or source[i] != "=":
                    if tag == "blockquote" and name == "expandable":
                        argument = "expandable"
                        continue
                    raise HtmlParseError(
                        f'Expected equal sign in declaration of an attribute of the tag "{tag}" '
                        f"at byte offset {begin_bytes}"
                    )
                i = _skip_spaces(source, i + 1)
                if i >= n:
                    raise HtmlParseError(f"Unclosed start tag at byte offset {begin_bytes}")
                if source[i] not in "'\"":
                    match = _NAME_TOKEN.match(source, i)
                    assert match is not None
                    value = match.group().lower()
                    i = match.end()
                    if i < n and source[i] not in _SPACES and source[i] != ">":
                        raise HtmlParseError(
                            f"Unexpected end of name token at byte offset {_byte_offset(source, i)}"
                        )
                else:
                    quote = source[i]
                    i += 1
                    chars: list[str] = []
                    while i < n and source[i] != quote:
                        if source[i] == "&":
                            decoded = _decode_entity(source, i, strict=False)
                            if decoded is not None:
                                chars.append(decoded[0])
                                i = decoded[1]
                                continue
                        chars.append(source[i])
                        i += 1
                    if i >= n:
                        raise HtmlParseError(f"Unclosed start tag at byte offset {begin_bytes}")
                    i += 1
                    value = "".join(chars)
                if i >= n:
                    raise HtmlParseError(f"Unclosed start tag at byte offset {begin_bytes}")
                if tag == "a" and name == "href":
                    argument = value
                elif tag == "code" and name == "class" and value.startswith("language-"):
                    argument = value[len("language-") :]
                elif tag == "span" and name == "class" and value.startswith("tg-"):
                    argument = value[len("tg-") :]
                elif tag == "tg-emoji" and name == "emoji-id":
                    argument = value
                elif tag == "tg-time" and name in ("unix", "format"):
                    unix, _, fmt = argument.partition("|")
                    argument = f"{value}|{fmt}" if name == "unix" else f"{unix}|{value}"
                elif tag == "blockquote" and name == "expandable":
                    argument = "expandable"
                elif strict:
                    raise HtmlParseError(
                        f'Unsupported attribute "{name}" in the tag "{tag}" at byte offset '
                        f"{begin_bytes} (strict fake check)"
                    )
            if tag == "span" and argument != "spoiler":
                raise HtmlParseError(
                    f'Tag "span" must have class "tg-spoiler" at byte offset {begin_bytes}'
                )
            if tag == "tg-emoji" and not argument.isdigit():
                raise HtmlParseError(
                    f'Tag "tg-emoji" must have a valid "emoji-id" at byte offset {begin_bytes}'
                )
            if tag == "tg-time":
                unix, _, fmt = argument.partition("|")
                if not unix.isdigit() or not 0 < int(unix) < 2**31:
                    raise HtmlParseError(
                        f'Tag "tg-time" must have a valid "unix" at byte offset {begin_bytes}'
                    )
                if not _TIME_FORMAT.fullmatch(fmt):
                    raise HtmlParseError(
                        f'Invalid date-time format "{fmt}" at byte offset {begin_bytes}'
                    )
            stack.append(_Open(tag, argument, out_len, begin_bytes))
            continue

        # closing tag
        i += 1
        if not stack:
            raise HtmlParseError(f"Unexpected end tag at byte offset {begin_bytes}")
        j = i
        while j < n and source[j] not in _SPACES and source[j] != ">":
            j += 1
        end_tag = source[i:j].lower()
        j = _skip_spaces(source, j)
        if j >= n or source[j] != ">":
            raise HtmlParseError(f"Unclosed end tag at byte offset {begin_bytes}")
        opened = stack.pop()
        if end_tag and end_tag != opened.tag:
            raise HtmlParseError(
                f'Unmatched end tag at byte offset {begin_bytes}, expected "</{opened.tag}>", '
                f'found "</{end_tag}>"'
            )
        i = j + 1
        length = out_len - opened.start
        if length <= 0:
            continue
        if opened.tag == "a" and not opened.argument:
            continue
        if (
            opened.tag == "code"
            and opened.argument
            and stack
            and stack[-1].tag == "pre"
            and stack[-1].start == opened.start
        ):
            stack[-1].argument = opened.argument  # <pre><code class="language-x"> -> pre+lang
            continue
        entity: dict[str, Any] = {
            "type": _ENTITY_TYPES[opened.tag],
            "offset": opened.start,
            "length": length,
        }
        if opened.tag == "a":
            entity["url"] = opened.argument
        elif opened.tag == "pre" and opened.argument:
            entity["language"] = opened.argument
        elif opened.tag == "blockquote" and opened.argument == "expandable":
            entity["type"] = "expandable_blockquote"
        elif opened.tag == "tg-emoji":
            entity["custom_emoji_id"] = opened.argument
        elif opened.tag == "tg-time":
            unix, _, fmt = opened.argument.partition("|")
            entity["unix_time"] = int(unix)
            if fmt:
                entity["date_time_format"] = fmt
        entities.append(entity)
    if stack:
        raise HtmlParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1].tag}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def strip_text(text: str, entities: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Trim leading/trailing whitespace like Telegram does, shifting entity offsets."""
    stripped = text.strip()
    if not stripped:
        return "", []
    lead = utf16_len(text[: len(text) - len(text.lstrip())])
    total = utf16_len(stripped)
    result: list[dict[str, Any]] = []
    for entity in entities:
        start = max(entity["offset"] - lead, 0)
        end = min(entity["offset"] + entity["length"] - lead, total)
        if end > start:
            result.append({**entity, "offset": start, "length": end - start})
    return stripped, result
