"""The ledger's tree: an ordered tree of named parts whose subtotals are the sums of their children.

A leaf is one tensor (its shape gives its count). A node with ``n > 1`` stands for n identical copies of its
children (a group of identical decoder layers, or the routed experts of one MoE layer); ``n_active`` of those
copies are used for any one token (all of them, except for routed experts). Counts are Python ints, never numpy
scalars, so they are exact under Pyodide's wasm32 numpy as well.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from math import prod
from typing import Any


@dataclass(frozen=True)
class Node:
    name: str
    kind: str = ""
    shape: tuple[int, ...] | None = None
    children: tuple[Node, ...] = ()
    n: int = 1
    n_active: int | None = None
    matmul: bool = False          # a weight multiplied by an activation (2 FLOPs per weight per token)
    label: str = ""
    key: str = ""
    count: int = field(init=False)
    active: int = field(init=False)

    def __post_init__(self) -> None:
        if self.shape is not None:
            inner = inner_active = prod(self.shape)
        else:
            inner = inner_active = 0
            for c in self.children:
                inner, inner_active = inner + c.count, inner_active + c.active
        n_active = self.n if self.n_active is None else self.n_active
        object.__setattr__(self, "count", int(self.n * inner))
        object.__setattr__(self, "active", int(n_active * inner_active))

    @property
    def per_copy(self) -> int:
        """Count of one copy (one layer of a layer group, one expert)."""
        return self.count // self.n

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, key: str) -> Node:
        """The node whose key is ``key``. Keys are the paths of names from the root (with_keys), so only the
        children whose key starts that path are looked into."""
        found = self._find(key)
        if found is None:
            raise KeyError(key)
        return found

    def _find(self, key: str) -> Node | None:
        if self.key == key:
            return self
        for c in self.children:
            if key.startswith(c.key) and (len(key) == len(c.key) or key[len(c.key)] == "/"):
                found = c._find(key)
                if found is not None:
                    return found
        return None

    def get(self, key: str) -> Node | None:
        try:
            return self.find(key)
        except KeyError:
            return None

    def with_keys(self, prefix: str = "") -> Node:
        """A copy of this subtree with every node's key (the path of names from the root); self is left alone."""
        key = f"{prefix}/{self.name}" if prefix else self.name
        return self._copy(key, tuple(c.with_keys(key) for c in self.children))

    def keyed_in_place(self, prefix: str = "") -> Node:
        """with_keys for a tree fresh from a family's builder, which nothing else has seen yet (build_ledger's last
        step): a node without a key gets it in place, since copying every node was about 40% of what a ledger cost.
        A node that already has a key (used twice in one tree, or kept from another tree) is copied, never changed."""
        key = f"{prefix}/{self.name}" if prefix else self.name
        kids = tuple(c.keyed_in_place(key) for c in self.children)
        same_kids = all(a is b for a, b in zip(kids, self.children))
        if not self.key:
            object.__setattr__(self, "key", key)
            if not same_kids:
                object.__setattr__(self, "children", kids)
            return self
        if self.key == key and same_kids:
            return self
        return self._copy(key, kids)

    def _copy(self, key: str, children: tuple[Node, ...]) -> Node:
        return Node(self.name, self.kind, self.shape, children, self.n, self.n_active, self.matmul, self.label, key)

    def multiplicity(self, key: str) -> int:
        """How many copies of the node at ``key`` the whole tree holds (product of n along the path, excl. itself)."""
        def go(node: Node, acc: int) -> int | None:
            if node.key == key:
                return acc
            for c in node.children:
                found = go(c, acc * node.n)
                if found is not None:
                    return found
            return None
        found = go(self, 1)
        if found is None:
            raise KeyError(key)
        return found

    def sum_where(self, predicate: Callable[[Node, tuple[str, ...]], bool], active: bool = False) -> int:
        """Sum over leaves (times every multiplicity above them) where predicate(leaf, kinds_on_path) holds;
        with active=True only the copies used for one token are counted."""
        return self.sum_by(lambda leaf, kinds: True if predicate(leaf, kinds) else None, active).get(True, 0)

    def sum_by(self, key: Callable[[Node, tuple[str, ...]], Hashable | None],
               active: bool = False) -> dict[Any, int]:
        """{key(leaf, kinds_on_path): sum over those leaves (times every multiplicity above them)} in one walk;
        a leaf whose key is None is left out. Keys appear in the order their first leaf is met. With active=True
        only the copies used for one token are counted."""
        out: dict[Any, int] = {}

        def go(node: Node, mult: int, kinds: tuple[str, ...]) -> None:
            kinds = kinds + (node.kind,) if node.kind else kinds
            mult = mult * (node.n if not active or node.n_active is None else node.n_active)
            if node.shape is not None:
                k = key(node, kinds)
                if k is not None:
                    out[k] = out.get(k, 0) + mult * prod(node.shape)
                return
            for c in node.children:
                go(c, mult, kinds)
        go(self, 1, ())
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "name": self.name, "count": self.count}
        if self.kind:
            out["kind"] = self.kind
        if self.active != self.count:
            out["active"] = self.active
        if self.n != 1:
            out["n"] = self.n
            if self.n_active is not None and self.n_active != self.n:
                out["n_active"] = self.n_active
        if self.shape is not None:
            out["shape"] = list(self.shape)
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


def leaf(name: str, *shape: int, kind: str = "", matmul: bool | None = None) -> Node:
    """One tensor. 2-D weights are matmuls unless said otherwise."""
    return Node(name, kind, tuple(int(s) for s in shape), matmul=(len(shape) == 2) if matmul is None else matmul)


def group(name: str, children: Iterable[Node | None], kind: str = "", n: int = 1, n_active: int | None = None) -> Node:
    return Node(name, kind, None, tuple(c for c in children if c is not None), n, n_active)
