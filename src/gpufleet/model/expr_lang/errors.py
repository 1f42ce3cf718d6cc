"""expr's error, as ``expr-lang/expr``'s ``file/error.go`` writes it (``Error.Bind`` and ``Error.Error``): the
message, the position ``(line:column)``, then the source line with a caret under the column."""

from __future__ import annotations


class ExprError(ValueError):
    """A compile or run error, in expr's words: ``message (line:column)`` and the snippet under it."""

    def __init__(self, message: str, source: str = "", offset: int | None = None) -> None:
        self.message = message
        text = message
        if offset is not None:
            line = source.count("\n", 0, offset) + 1
            start = source.rfind("\n", 0, offset) + 1
            end = source.find("\n", offset)
            column = offset - start
            text += f" ({line}:{column + 1})\n | {source[start : None if end < 0 else end]}\n | "
            text += "." * column + "^"
        #: the first line: the message and its position
        self.headline = text.split("\n", 1)[0]
        super().__init__(text)
