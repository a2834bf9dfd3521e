"""No import circle anywhere in the product, imports inside functions included.

import-linter's layer contracts (``make test``) keep the packages and the analytics sub-domains in order, but a
circle between two modules of one layer is invisible to them; an import moved into a function still ties the two
modules together. grimp (import-linter's own graph) reads every import statement, nested ones too.
"""

from __future__ import annotations

import grimp

PRODUCT = (
    "config",
    "home",
    "demo",
    "analytics",
    "ranking",
    "annotation",
    "portal",
    "evaluation",
    "metrics",
    "stats",
    "records",
)


def import_circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(imports):
        if root in index:
            continue
        work = [(root, iter(sorted(imports[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle_and_only_circles():
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(imports) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def test_the_product_has_no_import_circle():
    graph = grimp.build_graph(*PRODUCT, cache_dir=None)
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    # a package's __init__ imported by its own modules is not a circle between two pieces of code
    assert import_circles(imports) == []
