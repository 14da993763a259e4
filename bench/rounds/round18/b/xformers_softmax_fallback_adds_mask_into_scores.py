# label: hazard raises
# why: the PyTorch fallback of xformers' softmax adds the attention mask with x += mask into the caller's scores; when those scores are a learned leaf parameter (random-synthesizer attention) the in-place add is rejected
# source: https://github.com/facebookresearch/xformers/commit/e75ec39fa73e7cd5568e60809eb38b02586ec20b
import logging
from typing import Optional

import torch
import torch.nn as nn

torch.manual_seed(0)
_triton_registered_overflow = False
_triton_registered_warnings = False


def _softmax_dispatch(x: torch.Tensor, log: bool, mask: Optional[torch.Tensor], causal: bool = False) -> torch.Tensor:
    global _triton_registered_overflow
    global _triton_registered_warnings

    if torch.cuda.is_available() and x.is_cuda and not _triton_registered_overflow:
        raise NotImplementedError("triton kernel not reduced here")

    if causal and not _triton_registered_warnings:
        logging.warning("Triton softmax could not be used. The causal flags is being passed but it does not provide any benefit with PyTorch softmax.")
        _triton_registered_warnings = True

    if mask is not None:
        x += mask  # <-- IPL003, IPL004: writes the mask into the caller's scores, here a leaf parameter
    if log:
        return torch.log_softmax(x, dim=-1)
    else:
        return torch.softmax(x, dim=-1)


def softmax(x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False) -> torch.Tensor:
    return _softmax_dispatch(x, log=False, mask=mask, causal=causal)


class RandomSynthesizerAttention(nn.Module):
    """Attention whose weights are a learned (seq x seq) logit table instead of q @ k^T."""

    def __init__(self, dim, seq_len, causal=True):
        super().__init__()
        self.attn_logits = nn.Parameter(torch.randn(seq_len, seq_len) * 0.1)
        self.to_v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.causal = causal
        mask = torch.zeros(seq_len, seq_len)
        mask[~torch.tril(torch.ones_like(mask)).bool()] = -float("inf")
        self.register_buffer("mask", mask)

    def forward(self, x):
        att = softmax(self.attn_logits, self.mask if self.causal else None, causal=self.causal)
        return self.proj(att @ self.to_v(x))


layer = RandomSynthesizerAttention(dim=8, seq_len=6)
x = torch.randn(2, 6, 8)
y = layer(x)
loss = torch.norm(y)
loss.backward()
