"""Header shapes: what a parsed head (``@proc(...)``, ``~Type(...)``, ``[target]``, metric head)
holds, as plain tuples with offsets relative to the head's text, and the lark `Transformer`
that builds them from ``grammar/header.lark`` trees.

The LALR parser applies `HeadShapes` while it parses (lark's ``transformer=`` option), so no
parse tree is kept for the rules it handles; the ``type`` subtree of a direct annotation is
still built, only for its positions. Shapes are cached per head text and turned into nodes
with absolute spans by `heads`.
"""

from __future__ import annotations

from typing import NamedTuple

from lark import Token, Transformer, Tree, v_args

__all__ = ["HeadShape", "HeadShapes", "RawParam", "Ret", "TypeShape"]

# (source, start, end, backtick): ``source`` is "" for direct types (sliced later)
TypeShape = tuple[str, int, int, bool]
# (name, name offset, start, end, annotation, default (source, start, end))
RawParam = tuple[str, int, int, int, "TypeShape | None", "tuple[str, int, int] | None"]


class Ret(NamedTuple):
    """``-> T`` of a procedure header."""

    shape: TypeShape


class Param(NamedTuple):
    """A parameter before its default is checked (a fence default is an error)."""

    name: Token
    start: int
    end: int
    annot: TypeShape | None
    default: Token | None  # CODE or FENCE


class HeadShape(NamedTuple):
    """A procedure or type header: its name token, parameters and return annotation."""

    name: Token
    params: tuple[Param, ...]
    ret: TypeShape | None


def _end(part: Token | TypeShape) -> int:
    return (part.end_pos or 0) if isinstance(part, Token) else part[2]


class HeadShapes(Transformer[Token, object]):
    """Header parse trees -> shapes (rules not named here stay lark trees)."""

    @v_args(inline=True)
    def backtick_type(self, code: Token) -> TypeShape:
        return code.value[1:-1], code.start_pos or 0, code.end_pos or 0, True

    @v_args(inline=True)
    def direct_type(self, tree: Tree) -> TypeShape:
        return "", tree.meta.start_pos, tree.meta.end_pos, False

    @v_args(inline=True)
    def default(self, token: Token) -> Token:
        return token

    @v_args(inline=True)
    def ret(self, shape: TypeShape) -> Ret:
        return Ret(shape)

    @v_args(inline=True)
    def param(self, name: Token, *parts: Token | TypeShape) -> Param:
        annot: TypeShape | None = None
        default: Token | None = None
        for part in parts:
            if isinstance(part, Token):
                default = part
            else:
                annot = part
        end = _end(parts[-1]) if parts else (name.end_pos or 0)
        return Param(name, name.start_pos or 0, end, annot, default)

    @v_args(inline=True)
    def proc_header(self, name: Token, *parts: Param | Ret) -> HeadShape:
        params = tuple(p for p in parts if isinstance(p, Param))
        ret = next((p.shape for p in parts if isinstance(p, Ret)), None)
        return HeadShape(name, params, ret)

    type_header = proc_header

    @v_args(inline=True)
    def target(self, name: Token, shape: TypeShape | None = None) -> tuple[Token, TypeShape | None]:
        return name, shape

    @v_args(inline=True)
    def metric_head(self, *names: Token) -> tuple[Token, ...]:
        return names
