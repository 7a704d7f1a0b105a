"""Walking the autograd graph: every traversal of the library goes through ``walk``.

A graph node (``FunctionNode``, ``AccumulateGrad``, distributed autograd's
send and recv nodes) points at the nodes that produced its inputs through
``next_edges``: a tuple with one ``(node, output_nr)`` pair or None per input.
"""

from __future__ import annotations


def walk(roots, skip=None):
    """Yield every node reachable from ``roots`` along ``next_edges``, each exactly once.

    The order is depth-first and unspecified beyond "each node once"; the
    walk is iterative, so graphs deeper than Python's recursion limit are fine.
    Nodes are compared by identity, as the engine does.

    Args:
        roots: an iterable of graph nodes (None entries are skipped).
        skip: optional ``skip(node) -> bool``; a node for which it is true is
            neither yielded nor walked past (its inputs are reached only
            through other nodes). In-place ops use it to stop at history
            older than the write.

    Yields:
        graph nodes, the roots included.
    """
    seen = set()
    stack = [root for root in roots if root is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if skip is not None and skip(node):
            continue
        yield node
        for edge in node.next_edges:
            if edge is not None and edge[0] not in seen:
                stack.append(edge[0])
