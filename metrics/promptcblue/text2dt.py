"""Text2DT's tree edit-distance ratio, step for step as the official ``text2dt_eval_func.py`` and
``calc_text2dt_task_scores`` compute it.

A tree is its nodes in preorder, each ``{"role": "C"|"D", "logical_rel": …, "triples": [(s, p, o), …]}``. The
official functions are followed to the letter, their odd corners included, because the figure depends on them: the
node matrix is built by at most 101 sweeps (a malformed role sequence simply leaves nodes unlinked), and the edit
distance keeps what it had added when a malformed tree makes it stop half way (the official code catches the error
and returns the partial sum).
"""

from __future__ import annotations

from dataclasses import dataclass

# What the official parser puts in place of an answer with no node at all.
DEFAULT_TREE = ({"role": "D", "logical_rel": "null", "triples": []},)
_EMPTY_NODE = {"role": "", "triples": [], "logical_rel": "null"}


@dataclass(frozen=True)
class TreeCounts:
    """One sample's share of the task figure: ratio = 1 - sum(edit) / sum(max_edit)."""

    edit: int
    max_edit: int


def _lowered(tree: list[dict]) -> list[dict]:
    # The official scorer lower-cases every triple element (in place) before anything is compared.
    return [
        {
            "role": node["role"],
            "logical_rel": node["logical_rel"],
            "triples": [(t[0].lower(), t[1].lower(), t[2].lower()) for t in node["triples"]],
        }
        for node in tree
    ]


def node_matrix(tree: list[dict]) -> list[list]:
    """matrix[i][j] = 'F' / 'L' / 'R': node j is the parent / left child / right child of node i (else 0)."""
    roles = [node["role"] for node in tree]
    matrix: list[list] = [[0] * len(roles) for _ in roles]
    sweeps = 0
    while roles[0] != "D":
        for i in range(len(roles)):
            if roles[i] == "C":
                flag, leaf1, leaf2 = 0, 0, 0
                for j in range(i + 1, len(roles)):
                    if roles[j] == "D" and flag == 0:
                        flag = 1
                        leaf1 = j
                    elif roles[j] == "X":
                        continue
                    elif roles[j] == "D" and flag == 1:
                        leaf2 = j
                        roles[i] = "D"
                        matrix[leaf1][i] = "F"
                        matrix[leaf2][i] = "F"
                        matrix[i][leaf1] = "L"
                        matrix[i][leaf2] = "R"
                        for k in range(i + 1, leaf2 + 1):
                            roles[k] = "X"
                        flag = 2
                        break
                    elif roles[j] == "C":
                        break
                if flag == 2:
                    break
        sweeps += 1
        if sweeps > 100:
            break
    return matrix


def node_distance(node1: dict, node2: dict | None) -> int:
    if node2 is None:
        node2 = _EMPTY_NODE
    distance = (node1["role"] != node2["role"]) + (node1["logical_rel"] != node2["logical_rel"])
    return distance + len(set(node1["triples"]) ^ set(node2["triples"]))


def _has_children(row: list) -> bool:
    return "L" in row or "R" in row


def edit_distance(predict: list[dict], gold: list[dict], predict_matrix: list[list], gold_matrix: list[list]) -> int:
    distance = 0
    stack1, stack2 = [0], [0]
    try:
        while stack1:
            s1 = stack1.pop()
            s2 = stack2.pop()
            p_row, g_row = predict_matrix[s1], gold_matrix[s2]
            p_leaf = "L" not in p_row and "R" not in p_row
            p_full = "L" in p_row and "R" in p_row
            if p_leaf and _has_children(g_row):
                distance += node_distance(predict[s1], gold[s2])
                distance += _subtree_cost(gold, gold_matrix, g_row)
            elif p_full and ("L" not in g_row or "R" not in g_row):
                distance += node_distance(predict[s1], gold[s2])
                distance += _subtree_cost(predict, predict_matrix, p_row)
            elif p_leaf and "L" not in g_row and "R" not in g_row:
                distance += node_distance(predict[s1], gold[s2])
            else:
                stack1.append(p_row.index("R"))
                stack1.append(p_row.index("L"))
                stack2.append(g_row.index("R"))
                stack2.append(g_row.index("L"))
                distance += node_distance(predict[s1], gold[s2])
    except (ValueError, IndexError, _PartialCost) as exc:
        # Deliberate: the official function prints the error and returns what it had summed so far.
        if isinstance(exc, _PartialCost):
            distance += exc.cost
    return distance


class _PartialCost(Exception):
    def __init__(self, cost: int) -> None:
        self.cost = cost


def _subtree_cost(tree: list[dict], matrix: list[list], row: list) -> int:
    """What deleting a node's two subtrees costs; on a malformed matrix, what was counted before it broke."""
    cost = 0
    try:
        pending = [row.index("R"), row.index("L")]
        while pending:
            index = pending.pop()
            cost += node_distance(tree[index], None)
            if "L" in matrix[index] and "R" in matrix[index]:
                pending.append(matrix[index].index("R"))
                pending.append(matrix[index].index("L"))
    except (ValueError, IndexError):
        raise _PartialCost(cost) from None
    return cost


def _content_nodes(tree: list[dict]) -> int:
    # node_extraction's count: the nodes that hold at least one triple.
    return sum(1 for node in tree if node["triples"])


def _distinct_triples(tree: list[dict]) -> int:
    return len({triple for node in tree for triple in node["triples"]})


def tree_counts(predict_tree: list[dict], gold_tree: list[dict]) -> TreeCounts:
    """One sample's edit distance and its maximum (distinct triples plus twice the nodes holding triples, on both
    sides: calc_text2dt_task_scores's ``(tmp[3] + tmp[10] * 2) + (tmp[4] + tmp[11] * 2)``)."""
    predict = _lowered(predict_tree)
    gold = _lowered(gold_tree)
    edit = edit_distance(predict, gold, node_matrix(predict), node_matrix(gold))
    max_edit = (
        _distinct_triples(predict) + 2 * _content_nodes(predict) + _distinct_triples(gold) + 2 * _content_nodes(gold)
    )
    return TreeCounts(edit, max_edit)


def tree_edit_ratio(counts: list[TreeCounts]) -> float:
    """The task figure (official ``tree_lenv_radio``). Raises ZeroDivisionError where the official code does: no
    triple anywhere."""
    edit = 0
    max_edit = 0
    for one in counts:
        edit += one.edit
        max_edit += one.max_edit
    return 1 - edit / max_edit
