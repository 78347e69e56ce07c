"""A small stand-in for `einops`, written for this project's peer benchmarks.

Neither Debian 12 nor npm packages einops, and the peers in bench/peers import it. This module
implements the part of its documented interface those peers call, on torch tensors:
`rearrange`, `repeat`, `reduce`, `pack`, `unpack`, `einsum` and `layers.torch.Rearrange`.
Patterns follow einops' grammar: named axes, `(a b)` groups, `...`, and `1` / `()` for unit axes.
Every transformation is one reshape, one permute, an optional expand or reduction, and a final
reshape, so timings measure the peers' own work.
"""
import functools
import math

import torch

__all__ = ["rearrange", "repeat", "reduce", "pack", "unpack", "einsum", "EinopsError"]


class EinopsError(ValueError):
    pass


ELLIPSIS = "..."
GROUPED_ELLIPSIS = "(...)"  # '...' inside brackets: its axes form one group


def _parse_side(side):
    """'b (h d) ...' -> [['b'], ['h', 'd'], ['...']]; '1' and '()' are groups with no axis."""
    groups, current = [], None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if current is not None:
                raise EinopsError(f"nested brackets in '{side}'")
            current = []
        elif token == ")":
            if current is None:
                raise EinopsError(f"unbalanced brackets in '{side}'")
            groups.append(current)
            current = None
        else:
            axes = [] if token == "1" else [token]
            if token == ELLIPSIS and current is not None:
                axes = [GROUPED_ELLIPSIS]
            if current is None:
                groups.append(axes)
            else:
                current.extend(axes)
    if current is not None:
        raise EinopsError(f"unbalanced brackets in '{side}'")
    return groups


@functools.lru_cache(maxsize=256)
def _parse(pattern):
    if "->" not in pattern:
        raise EinopsError(f"pattern '{pattern}' has no '->'")
    left, right = pattern.split("->")
    return _parse_side(left), _parse_side(right)


def _expand_ellipsis(groups, count):
    """Replaces '...' by `count` elementary axes named '...0', '...1', ...; a bracketed '...'
    becomes one group of them."""
    names = [f"{ELLIPSIS}{i}" for i in range(count)]
    out = []
    for group in groups:
        if group == [ELLIPSIS]:
            out.extend([[name] for name in names])
        elif GROUPED_ELLIPSIS in group:
            at = group.index(GROUPED_ELLIPSIS)
            out.append(group[:at] + names + group[at + 1:])
        else:
            out.append(list(group))
    return out


def _bind_left(tensor, left, lengths):
    """Sizes of every elementary axis on the left, checked against the tensor's shape."""
    has_ellipsis = any(ELLIPSIS in g or GROUPED_ELLIPSIS in g for g in left)
    count = tensor.dim() - (len(left) - 1) if has_ellipsis else 0
    if (not has_ellipsis and tensor.dim() != len(left)) or count < 0:
        raise EinopsError(f"tensor of {tensor.dim()} dims does not match {len(left)} groups")
    left = _expand_ellipsis(left, count)
    sizes = dict(lengths)
    for group, dim in zip(left, tensor.shape):
        unknown = [a for a in group if a not in sizes]
        known = math.prod(sizes[a] for a in group if a in sizes)
        if len(unknown) > 1:
            raise EinopsError(f"cannot infer sizes of {unknown}")
        if unknown:
            if known == 0 or dim % known:
                raise EinopsError(f"dimension {dim} is not divisible by {known}")
            sizes[unknown[0]] = dim // known
        elif known != dim:
            raise EinopsError(f"group {group} has size {known}, tensor has {dim}")
    return left, sizes, count


def _transform(tensor, pattern, operation, lengths, reduction=None):
    left, right = _parse(pattern)
    left, sizes, count = _bind_left(tensor, left, lengths)
    right = _expand_ellipsis(right, count)
    left_axes = [a for g in left for a in g]
    right_axes = [a for g in right for a in g]
    if len(set(left_axes)) != len(left_axes) or len(set(right_axes)) != len(right_axes):
        raise EinopsError(f"an axis repeats on one side of '{pattern}'")
    new_axes = [a for a in right_axes if a not in left_axes]
    gone_axes = [a for a in left_axes if a not in right_axes]
    if operation == "rearrange" and (new_axes or gone_axes):
        raise EinopsError(f"rearrange cannot add or remove axes: '{pattern}'")
    if operation == "repeat" and gone_axes:
        raise EinopsError(f"repeat cannot remove axes: '{pattern}'")
    if operation == "reduce" and new_axes:
        raise EinopsError(f"reduce cannot add axes: '{pattern}'")
    for axis in new_axes:
        if axis not in sizes:
            raise EinopsError(f"size of new axis '{axis}' not given")

    x = tensor.reshape([sizes[a] for a in left_axes])
    if gone_axes:
        dims = [left_axes.index(a) for a in gone_axes]
        x = getattr(x, reduction)(dim=dims) if reduction in ("sum", "mean", "prod") else \
            _reduce_by(x, dims, reduction)
        left_axes = [a for a in left_axes if a not in gone_axes]
    kept = [a for a in right_axes if a in left_axes]
    x = x.permute([left_axes.index(a) for a in kept])
    if new_axes:
        view = []
        for axis in right_axes:
            view.append(sizes[axis] if axis in left_axes else 1)
        x = x.reshape(view).expand([sizes[a] for a in right_axes])
    return x.reshape([math.prod(sizes[a] for a in g) for g in right])


def _reduce_by(x, dims, reduction):
    for dim in sorted(dims, reverse=True):
        x = getattr(x, reduction)(dim=dim)
        if isinstance(x, tuple):
            x = x[0]
    return x


def rearrange(tensor, pattern, **axes_lengths):
    if isinstance(tensor, (list, tuple)):
        tensor = torch.stack(list(tensor))
    return _transform(tensor, pattern, "rearrange", axes_lengths)


def repeat(tensor, pattern, **axes_lengths):
    return _transform(tensor, pattern, "repeat", axes_lengths)


def reduce(tensor, pattern, reduction, **axes_lengths):
    return _transform(tensor, pattern, "reduce", axes_lengths, reduction)


def _star_position(pattern):
    axes = pattern.split()
    if axes.count("*") != 1:
        raise EinopsError(f"pack pattern '{pattern}' needs exactly one '*'")
    return axes.index("*"), len(axes)


def pack(tensors, pattern):
    """Joins tensors along the '*' position, each flattened there; returns (packed, shapes)."""
    at, count = _star_position(pattern)
    after = count - at - 1
    flat, shapes = [], []
    for t in tensors:
        star_dims = t.dim() - (count - 1)
        if star_dims < 0:
            raise EinopsError(f"tensor of {t.dim()} dims does not fit '{pattern}'")
        shapes.append(tuple(t.shape[at:at + star_dims]))
        flat.append(t.reshape(*t.shape[:at], -1, *t.shape[t.dim() - after:]))
    return torch.cat(flat, dim=at), shapes


def unpack(tensor, packed_shapes, pattern):
    at, count = _star_position(pattern)
    lengths = [math.prod(s) for s in packed_shapes]
    pieces = torch.split(tensor, lengths, dim=at)
    return [p.reshape(*p.shape[:at], *s, *p.shape[at + 1:]) for p, s in zip(pieces, packed_shapes)]


def einsum(*args):
    """einops' einsum: tensors first, then a pattern with multi-letter axis names."""
    *tensors, pattern = args
    letters, table = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), {}

    def side(text):
        out = []
        for name in text.split():
            if name == ELLIPSIS:
                out.append(ELLIPSIS)
                continue
            if name not in table:
                table[name] = next(letters)
            out.append(table[name])
        return "".join(out)

    inputs, output = pattern.split("->")
    equation = ",".join(side(part) for part in inputs.split(",")) + "->" + side(output)
    return torch.einsum(equation, *tensors)
