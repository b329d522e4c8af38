"""Build HTML in which every string read from the inputs is escaped, by construction.

The report's HTML is assembled only from :func:`element` calls: every child that is not already
:class:`Markup` (the output of :func:`element` or :func:`escape`) is escaped with
:func:`html.escape` (``&``, ``<``, ``>``, ``"`` and ``'``), and so is every attribute value. Tag
and attribute names are checked against fixed patterns, event-handler attributes (``on*``) are
refused, ``href`` must be an ``http(s)`` URL or an ``#anchor`` and ``src`` an inlined PNG or
GIF. So an algorithm named ``<script>alert(1)</script>`` or ``" onmouseover="...`` can only ever
become text; the page's Content-Security-Policy (no scripts at all) is a second,
independent guard.

Classes: Markup.
Functions: escape, element, safe_url.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from arcadebench.errors import InvalidArgument

__all__ = ["Markup", "element", "escape", "safe_url"]

_TAG = re.compile(r"^[a-z][a-z0-9]*$")
_ATTRIBUTE = re.compile(r"^[a-z][a-z0-9-]*$")
_VOID = frozenset({"meta", "img", "br", "col", "hr"})
_IMAGES = ("data:image/png;base64,", "data:image/gif;base64,")
_ANCHOR = re.compile(r"^#[a-z0-9-]+$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


class Markup(str):
    """A string of HTML that is safe to emit as is (made by :func:`element` or :func:`escape`)."""

    __slots__ = ()


def escape(value: object) -> Markup:
    """``value`` as HTML text (``Markup`` passes through unchanged).

    Example:
        >>> escape('<script>"x"</script>')
        '&lt;script&gt;&quot;x&quot;&lt;/script&gt;'
    """
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def safe_url(url: object) -> bool:
    """Whether ``url`` may become a link: an ``http(s)`` URL without spaces or quotes."""
    return isinstance(url, str) and re.fullmatch(r"https?://[^\s\"'<>`]+", url) is not None


def _inlined_image(value: object) -> bool:
    """Whether ``value`` is a base64 PNG or GIF ``data:`` URL (the page loads nothing)."""
    if not isinstance(value, str):
        return False
    prefix = next((p for p in _IMAGES if value.startswith(p)), None)
    return prefix is not None and _BASE64.fullmatch(value[len(prefix) :]) is not None


def _children(items: Iterable[object]) -> Iterable[object]:
    for item in items:
        if item is None or item is False:
            continue
        if isinstance(item, list | tuple):
            yield from _children(item)
        else:
            yield item


def element(tag: str, *children: object, **attributes: object) -> Markup:
    """``<tag attributes>children</tag>`` with every child and attribute value escaped.

    Attribute names are keyword names with ``_`` as ``-`` and a trailing ``_`` dropped
    (``class_`` -> ``class``, ``data_key`` -> ``data-key``); ``None``/``False`` omit an
    attribute, ``True`` writes it bare. Lists and tuples of children are flattened.

    Raises:
        InvalidArgument: a bad tag or attribute name, an event handler, a non-http(s) ``href``
            or a ``src`` that is not an inlined PNG or GIF.

    Example:
        >>> element("td", "<b>", class_="num", title='say "hi"')
        '<td class="num" title="say &quot;hi&quot;">&lt;b&gt;</td>'
    """
    if not _TAG.fullmatch(tag):
        raise InvalidArgument(f"`tag` must be a lower-case HTML tag name, got {tag!r}")
    parts = [f"<{tag}"]
    for key, value in attributes.items():
        name = key.rstrip("_").replace("_", "-")
        if not _ATTRIBUTE.fullmatch(name) or name.startswith("on"):
            raise InvalidArgument(
                f"attribute names must be plain and not event handlers, got {name!r}"
            )
        if value is None or value is False:
            continue
        if name == "href" and not (safe_url(value) or _ANCHOR.fullmatch(str(value))):
            raise InvalidArgument(f"`href` must be an http(s) URL or an #anchor, got {value!r}")
        if name == "src" and not _inlined_image(value):
            raise InvalidArgument("`src` must be an inlined PNG or GIF (data:image/png;base64,...)")
        parts.append(
            f" {name}" if value is True else f' {name}="{html.escape(str(value), quote=True)}"'
        )
    parts.append(">")
    items = list(_children(children))
    if tag in _VOID:
        if items:
            raise InvalidArgument(f"<{tag}> cannot have children")
        return Markup("".join(parts))
    parts.extend(escape(item) for item in items)
    parts.append(f"</{tag}>")
    return Markup("".join(parts))
