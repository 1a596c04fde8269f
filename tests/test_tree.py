"""experiments/ledger/tree.py on its own: counts, copies, keys, lookups and sums of a small hand-built tree.

Every expected number is worked out by hand in a comment beside it; nothing is read back from the code under test.
The tree used throughout:

    model
    ├── embed                (10, 4)            kind embedding                  40
    ├── layers  n=4          one copy: 25 + 4 + 152 = 181 (active 91)
    │   ├── attn             kind attention
    │   │   ├── q.weight     (5, 4)                                              20
    │   │   └── q_norm       (5,)                kind norm                       5
    │   ├── input_norm       (4,)                kind norm                       4
    │   └── mlp              kind ffn
    │       ├── experts  n=8, n_active=2
    │       │   ├── w.weight (3, 4)                                              12
    │       │   └── w.bias   (3,)                                                3
    │       └── router       (8, 4)              kind router                     32
    └── lm_head              (10, 4)                                             40
"""
from __future__ import annotations

import dataclasses
import json

import pytest

from experiments.ledger.tree import Node, group, leaf


def make_tree() -> Node:
    experts = group("experts", [leaf("w.weight", 3, 4), leaf("w.bias", 3)], n=8, n_active=2)
    mlp = group("mlp", [experts, leaf("router", 8, 4, kind="router")], kind="ffn")
    attn = group("attn", [leaf("q.weight", 5, 4), leaf("q_norm", 5, kind="norm")], kind="attention")
    layers = group("layers", [attn, leaf("input_norm", 4, kind="norm"), mlp], n=4)
    return group("model", [leaf("embed", 10, 4, kind="embedding"), layers, leaf("lm_head", 10, 4)]).with_keys()


T = make_tree()
# one expert copy: 12 + 3 = 15; experts: 8 · 15 = 120 (active 2 · 15 = 30); mlp: 120 + 32 = 152 (active 62)
# attn: 20 + 5 = 25; one layer: 25 + 4 + 152 = 181 (active 25 + 4 + 62 = 91)
# layers: 4 · 181 = 724 (active 4 · 91 = 364); model: 40 + 724 + 40 = 804 (active 40 + 364 + 40 = 444)
COUNTS = {"model": (804, 444), "model/embed": (40, 40), "model/layers": (724, 364), "model/layers/attn": (25, 25),
          "model/layers/mlp": (152, 62), "model/layers/mlp/experts": (120, 30),
          "model/layers/mlp/experts/w.weight": (12, 12), "model/layers/mlp/router": (32, 32),
          "model/lm_head": (40, 40)}


# -- counts ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", COUNTS)
def test_count_and_active(key):
    node = T.find(key)
    assert (node.count, node.active) == COUNTS[key]
    assert type(node.count) is int and type(node.active) is int


def test_a_leaf_counts_its_shape():
    assert leaf("w", 3, 4).count == 12
    assert leaf("k", 2, 3, 4).count == 24
    assert leaf("scalar").count == 1                   # shape (): one number
    assert leaf("f", 3.0, 2).shape == (3, 2)           # shapes become ints
    assert Node("x", shape=(7, 6)).count == 42


def test_n_copies_and_n_active():
    one = [leaf("a", 2, 3), leaf("b", 4)]              # 6 + 4 = 10 per copy
    assert group("g", one).count == 10
    all_used = group("g", one, n=5)
    assert (all_used.count, all_used.active, all_used.per_copy) == (50, 50, 10)
    routed = group("g", one, n=5, n_active=2)
    assert (routed.count, routed.active, routed.per_copy) == (50, 20, 10)
    none_used = group("g", one, n=5, n_active=0)
    assert (none_used.count, none_used.active) == (50, 0)


def test_active_multiplies_down_through_nested_copies():
    inner = group("inner", [leaf("w", 2, 2)], n=6, n_active=3)       # 24, active 12
    outer = group("outer", [inner, leaf("x", 5)], n=3, n_active=2)    # 3 · 29 = 87, active 2 · (12 + 5) = 34
    assert (outer.count, outer.active, outer.per_copy) == (87, 34, 29)


def test_per_copy():
    assert T.find("model/layers").per_copy == 181
    assert T.find("model/layers/mlp/experts").per_copy == 15
    assert T.find("model/embed").per_copy == 40


def test_group_drops_none_children():
    g = group("g", [leaf("a", 2), None, leaf("b", 3), None])
    assert [c.name for c in g.children] == ["a", "b"] and g.count == 5


def test_nodes_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        T.n = 2


# -- leaves: matmul default --------------------------------------------------------------------------------------
@pytest.mark.parametrize("node, matmul", [
    (leaf("w", 3, 4), True),                         # a 2-D weight multiplies an activation
    (leaf("b", 4), False),                           # a vector does not
    (leaf("k", 2, 3, 4), False),                     # nor, by default, anything else
    (leaf("conv", 6, 1, 4, matmul=True), True),      # unless said
    (leaf("table", 10, 4, matmul=False), False),     # a 2-D lookup table can opt out
    (Node("raw", shape=(3, 4)), False),              # Node itself defaults to no matmul
    (group("g", [leaf("w", 3, 4)]), False),
])
def test_leaf_matmul_default(node, matmul):
    assert node.matmul is matmul


# -- keys, lookup ------------------------------------------------------------------------------------------------
def test_with_keys_gives_slash_paths_in_walk_order():
    assert [n.key for n in T.walk()] == [
        "model", "model/embed", "model/layers", "model/layers/attn", "model/layers/attn/q.weight",
        "model/layers/attn/q_norm", "model/layers/input_norm", "model/layers/mlp", "model/layers/mlp/experts",
        "model/layers/mlp/experts/w.weight", "model/layers/mlp/experts/w.bias", "model/layers/mlp/router",
        "model/lm_head"]


def test_with_keys_keeps_everything_else_and_leaves_the_original_alone():
    raw = group("m", [group("e", [leaf("w", 3, 4)], kind="ffn", n=8, n_active=2)])
    keyed = raw.with_keys("root")
    assert keyed.key == "root/m" and keyed.children[0].key == "root/m/e"
    e = keyed.children[0]
    assert (e.kind, e.n, e.n_active, e.count, e.active) == ("ffn", 8, 2, 96, 24)
    assert e.children[0].matmul is True and e.children[0].shape == (3, 4)
    assert [n.key for n in raw.walk()] == ["", "", ""]


def test_find_and_get():
    q = T.find("model/layers/attn/q.weight")
    assert (q.name, q.shape, q.count) == ("q.weight", (5, 4), 20)
    assert T.get("model/layers/attn/q.weight") is q
    assert T.get("model/nothing") is None
    with pytest.raises(KeyError, match="model/nothing"):
        T.find("model/nothing")
    assert T.find("model/layers/mlp").find("model/layers/mlp/router").count == 32
    with pytest.raises(KeyError):
        T.find("model/layers").find("model/embed")    # find looks only below the node it is called on


def test_find_tells_apart_siblings_whose_names_start_alike():
    """find looks only into children whose key starts the path: "a" must not stand in for "a.b" or "ab"."""
    t = group("m", [group("a", [leaf("x", 2)]), group("ab", [leaf("x", 3)]), group("a.b", [leaf("x", 5)])]).with_keys()
    assert [t.find(k).count for k in ("m/a/x", "m/ab/x", "m/a.b/x", "m/ab", "m")] == [2, 3, 5, 3, 10]
    assert t.get("m/a/y") is None and t.get("m/abc") is None and t.get("m/a/x/z") is None


@pytest.mark.parametrize("key, copies", [
    ("model", 1), ("model/embed", 1), ("model/layers", 1),            # a node's own n is not counted
    ("model/layers/attn", 4), ("model/layers/mlp/experts", 4),
    ("model/layers/mlp/experts/w.weight", 32),                        # 4 layers · 8 experts
    ("model/layers/mlp/router", 4),
])
def test_multiplicity(key, copies):
    assert T.multiplicity(key) == copies


def test_multiplicity_of_a_missing_key():
    with pytest.raises(KeyError):
        T.multiplicity("model/layers/nothing")


def test_multiplicity_times_count_adds_up():
    """Each leaf's count times its copies, summed, is the whole tree's count (804)."""
    leaves = [n for n in T.walk() if n.shape is not None]
    assert sum(T.multiplicity(n.key) * n.count for n in leaves) == 804


# -- sum_where -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("predicate, total, active", [
    (lambda node, kinds: True, 804, 444),
    (lambda node, kinds: "ffn" in kinds, 4 * 152, 4 * 62),                          # 608, 248
    (lambda node, kinds: "router" in kinds, 4 * 32, 4 * 32),                        # a leaf's own kind counts
    (lambda node, kinds: "norm" in kinds, 4 * (5 + 4), 4 * (5 + 4)),                # q_norm inside attention too
    (lambda node, kinds: "attention" in kinds, 4 * 25, 4 * 25),
    (lambda node, kinds: kinds == (), 40, 40),                                      # lm_head only
    # every 2-D leaf: embed, q.weight, w.weight (per expert), router, lm_head
    (lambda node, kinds: node.matmul, 40 + 4 * (20 + 8 * 12 + 32) + 40, 40 + 4 * (20 + 2 * 12 + 32) + 40),
    (lambda node, kinds: node.name.endswith(".bias"), 4 * 8 * 3, 4 * 2 * 3),
    (lambda node, kinds: False, 0, 0),
])
def test_sum_where(predicate, total, active):
    assert T.sum_where(predicate) == total
    assert T.sum_where(predicate, active=True) == active


def test_sum_where_sees_the_kinds_on_the_path_outermost_first():
    seen = {}
    T.sum_where(lambda node, kinds: seen.setdefault(node.key, kinds) is None)
    assert seen["model/layers/attn/q_norm"] == ("attention", "norm")
    assert seen["model/layers/mlp/experts/w.weight"] == ("ffn",)
    assert seen["model/layers/mlp/router"] == ("ffn", "router")
    assert seen["model/embed"] == ("embedding",)
    assert seen["model/lm_head"] == ()


# -- sum_by: every value of a key in one walk ----------------------------------------------------------------------
def test_sum_by_equals_sum_where_for_each_key():
    def first_kind(node, kinds):
        return kinds[0] if kinds else None                 # lm_head (no kind) is left out
    # embedding 40; attention 4 · 25 = 100; ffn 4 · 152 = 608 (active 4 · 62 = 248); norm: input_norm 4 · 4 = 16
    assert T.sum_by(first_kind) == {"embedding": 40, "attention": 100, "norm": 16, "ffn": 608}
    assert T.sum_by(first_kind, active=True) == {"embedding": 40, "attention": 100, "norm": 16, "ffn": 248}
    assert list(T.sum_by(first_kind)) == ["embedding", "attention", "norm", "ffn"]    # first leaf met first
    for k in ("embedding", "attention", "norm", "ffn"):
        for active in (False, True):
            of_kind = T.sum_where(lambda n, kinds, k=k: first_kind(n, kinds) == k, active)
            assert T.sum_by(first_kind, active)[k] == of_kind


# -- to_json -------------------------------------------------------------------------------------------------------
def test_to_json_shape():
    small = group("m", [leaf("e", 10, 4, kind="embedding"),
                        group("experts", [leaf("w", 3, 4)], kind="ffn", n=8, n_active=2),
                        group("dense", [leaf("v", 2)], n=3, n_active=3),
                        group("plain", [leaf("u", 2)], n=2)]).with_keys()
    assert small.to_json() == {
        "key": "m", "name": "m", "count": 40 + 96 + 6 + 4, "active": 40 + 24 + 6 + 4,
        "children": [
            {"key": "m/e", "name": "e", "count": 40, "kind": "embedding", "shape": [10, 4]},
            {"key": "m/experts", "name": "experts", "count": 96, "kind": "ffn", "active": 24, "n": 8, "n_active": 2,
             "children": [{"key": "m/experts/w", "name": "w", "count": 12, "shape": [3, 4]}]},
            {"key": "m/dense", "name": "dense", "count": 6, "n": 3,           # n_active == n is left out
             "children": [{"key": "m/dense/v", "name": "v", "count": 2, "shape": [2]}]},
            {"key": "m/plain", "name": "plain", "count": 4, "n": 2,
             "children": [{"key": "m/plain/u", "name": "u", "count": 2, "shape": [2]}]},
        ]}
    assert list(small.to_json()) == ["key", "name", "count", "active", "children"]
    assert json.loads(json.dumps(small.to_json())) == small.to_json()      # plain JSON: ints, lists, strings


def test_to_json_of_the_whole_tree_round_trips_its_counts():
    def check(j):
        node = T.find(j["key"])
        assert j["count"] == node.count and j.get("active", j["count"]) == node.active
        for child in j.get("children", []):
            check(child)
    j = T.to_json()
    assert (j["count"], j["active"]) == (804, 444)
    check(j)
