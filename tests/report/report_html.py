"""Read a report page back: elements by id, by class, with their attributes and text."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = {"meta", "br", "img", "input", "link", "hr", "col"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Element]:
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and (
                cls is None or cls in child.attrs.get("class", "").split()
            ):
                found.append(child)
            found.extend(child.find_all(tag, cls))
        return found


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("root", {})
        self.stack = [self.root]
        self.by_id: dict[str, Element] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if "id" in element.attrs:
            self.by_id[element.attrs["id"]] = element
        if tag not in _VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element.text += data


@dataclass
class Page:
    root: Element
    by_id: dict[str, Element]

    def __getitem__(self, ident: str) -> Element:
        return self.by_id[ident]


def parse_page(html: str) -> Page:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return Page(builder.root, builder.by_id)
