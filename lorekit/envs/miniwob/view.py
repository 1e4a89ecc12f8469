"""What a MiniWoB++ page shows right now, as plain data for the scripted solvers.

The page's HTML does not say what a text field holds, which box is ticked or
where the focus is (those live in DOM properties, not attributes), so the
solvers read a :class:`View` instead: the utterance and every element of the
task area and its dialogs, each with a unique xpath that ``click_xpath``
accepts, its text and its live state. One browser call builds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.envs.miniwob.page import MiniWoBPage

# Every element under the body's children that are the task's (the same ones
# the observation shows), with an xpath anchored at the nearest unique id.
_READ_VIEW = """
const own = new Set(arguments[0]);
function xpath(el) {
  const parts = [];
  let node = el;
  while (node && node.nodeType === 1) {
    if (node.id && /^[\\w-]+$/.test(node.id)
        && document.querySelectorAll('#' + node.id).length === 1) {
      parts.unshift('//*[@id="' + node.id + '"]');
      return parts.join('/');
    }
    if (node === document.body) { parts.unshift('/html/body'); return parts.join('/'); }
    let i = 1;
    for (let s = node.previousElementSibling; s; s = s.previousElementSibling) {
      if (s.localName === node.localName) i++;
    }
    parts.unshift(node.localName + '[' + i + ']');
    node = node.parentElement;
  }
  return parts.join('/');
}
const jq = window.jQuery;
const out = [];
const seen = new Map();
for (const top of document.body.children) {
  if (own.has(top.id) || top.localName === 'script') continue;
  if (getComputedStyle(top).display === 'none' && top.id !== 'wrap') continue;
  for (const el of [top, ...top.querySelectorAll('*')]) {
    if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml') continue;
    if (el.localName === 'script' || el.localName === 'style') continue;
    const attrs = {};
    for (const a of el.attributes) {
      if (!a.name.startsWith('data-wob')) attrs[a.name] = a.value;
    }
    const input = 'value' in el && el.localName !== 'li' && el.localName !== 'button';
    seen.set(el, out.length);
    const rects = el.getClientRects();
    let covered = false;
    if (rects.length > 0) {
      const box = el.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      covered = hit !== null && hit !== el && !el.contains(hit);
    }
    const parent = seen.has(el.parentElement) ? seen.get(el.parentElement) : -1;
    out.push({
      parent: parent, xpath: xpath(el), tag: el.localName, id: el.id || '',
      classes: Array.from(el.classList),
      text: (el.textContent || '').replace(/\\s+/g, ' ').trim(),
      value: input ? String(el.value) : '',
      caret: input && typeof el.selectionStart === 'number' ? el.selectionStart : -1,
      checked: !!el.checked, selected: !!el.selected,
      focused: document.activeElement === el,
      visible: rects.length > 0 && getComputedStyle(el).visibility !== 'hidden',
      covered: covered,
      disabled: !!el.disabled, attrs: attrs,
      animating: !!(jq && jq(el).is(':animated')),
    });
  }
}
return [core.getUtterance(), out];
"""
_OWN_ELEMENTS = ("click-canvas", "reward-display", "sync-task-cover")
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class Element:
    """One element: where it is (``xpath``), what it says, what state it is in."""

    xpath: str
    tag: str
    index: int = 0
    parent: int = -1
    id: str = ""
    classes: tuple[str, ...] = ()
    text: str = ""
    value: str = ""
    caret: int = -1
    checked: bool = False
    selected: bool = False
    focused: bool = False
    visible: bool = True
    disabled: bool = False
    animating: bool = False
    covered: bool = False
    attrs: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_js(cls, index: int, data: Mapping[str, Any]) -> Element:
        return cls(
            xpath=str(data["xpath"]),
            tag=str(data["tag"]),
            index=index,
            parent=int(data.get("parent", -1)),
            id=str(data.get("id", "")),
            classes=tuple(str(c) for c in data.get("classes", ())),
            text=str(data.get("text", "")),
            value=str(data.get("value", "")),
            caret=int(data.get("caret", -1)),
            checked=bool(data.get("checked")),
            selected=bool(data.get("selected")),
            focused=bool(data.get("focused")),
            visible=bool(data.get("visible", True)),
            disabled=bool(data.get("disabled")),
            animating=bool(data.get("animating")),
            covered=bool(data.get("covered")),
            attrs={str(k): str(v) for k, v in dict(data.get("attrs", {})).items()},
        )


@dataclass(frozen=True)
class View:
    """The utterance and the elements of the page, in document order."""

    task: str
    utterance: str
    elements: tuple[Element, ...]

    def by_id(self, element_id: str) -> Element | None:
        return next((e for e in self.elements if e.id == element_id), None)

    def find(
        self,
        tag: str | None = None,
        *,
        cls: str | None = None,
        text: str | None = None,
        within: Element | None = None,
        visible: bool = True,
    ) -> list[Element]:
        """Elements matching every filter given: tag, class, exact text,
        inside ``within``, shown on screen (unless ``visible=False``)."""
        return [
            e
            for e in self.elements
            if (tag is None or e.tag == tag)
            and (cls is None or cls in e.classes)
            and (text is None or e.text == text)
            and (within is None or self.inside(e, within))
            and (e.visible or not visible)
        ]

    def inside(self, element: Element, ancestor: Element) -> bool:
        """Whether ``ancestor`` contains ``element`` (strictly)."""
        at = element.parent
        while at >= 0:
            if at == ancestor.index:
                return True
            at = self.elements[at].parent
        return False

    def settling(self, element: Element) -> bool:
        """Whether ``element`` or an ancestor is in a jQuery animation (a
        section opening): clicks on it may miss until that ends."""
        at = element.index
        while at >= 0:
            if self.elements[at].animating:
                return True
            at = self.elements[at].parent
        return False

    def first(self, tag: str | None = None, **filters: Any) -> Element | None:
        found = self.find(tag, **filters)
        return found[0] if found else None

    def quoted(self) -> list[str]:
        """The strings the utterance puts in double quotes, in order."""
        return _QUOTED.findall(self.utterance)


def read_view(page: MiniWoBPage) -> View:
    """A :class:`View` of ``page`` now (one browser call)."""
    utterance, elements = page.browser.call(
        lambda d: d.execute_script(_READ_VIEW, list(_OWN_ELEMENTS))
    )
    return View(
        page.task, str(utterance), tuple(Element.from_js(i, e) for i, e in enumerate(elements))
    )
