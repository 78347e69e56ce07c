"""The `Rearrange` layer of the einops stand-in (see einops/__init__.py)."""
from torch import nn

from einops import rearrange


class Rearrange(nn.Module):
    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths

    def forward(self, x):
        return rearrange(x, self.pattern, **self.axes_lengths)
