# label: hazard raises
# why: the pairwise cosine helper normalizes its arguments in place, overwriting the caller's query/document embeddings that torch.norm just saved for backward, so a retrieval loss built on it cannot be backpropagated
# source: https://github.com/Lightning-AI/torchmetrics/pull/1288 (commit 169ec1e4e1773f4c993ef27356bbf06d4cab08da)
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


def _check_input(x: Tensor, y: Optional[Tensor] = None, zero_diagonal: Optional[bool] = None) -> Tuple[Tensor, Tensor, bool]:
    if x.ndim != 2:
        raise ValueError(f"Expected argument `x` to be a 2D tensor of shape `[N, d]` but got {x.shape}")
    if y is not None:
        if y.ndim != 2 or y.shape[1] != x.shape[1]:
            raise ValueError("Expected argument `y` to be a 2D tensor of shape `[M, d]`")
        zero_diagonal = False if zero_diagonal is None else zero_diagonal
    else:
        y = x.clone()
        zero_diagonal = True if zero_diagonal is None else zero_diagonal
    return x, y, zero_diagonal


def _safe_matmul(x: Tensor, y: Tensor) -> Tensor:
    return x @ y.T


def _pairwise_cosine_similarity_update(x: Tensor, y: Optional[Tensor] = None, zero_diagonal: Optional[bool] = None) -> Tensor:
    x, y, zero_diagonal = _check_input(x, y, zero_diagonal)

    norm = torch.norm(x, p=2, dim=1)
    x /= norm.unsqueeze(1)  # <-- IPL001, IPL004: overwrites the caller's x, which torch.norm saved
    norm = torch.norm(y, p=2, dim=1)
    y /= norm.unsqueeze(1)  # <-- IPL001, IPL004: overwrites the caller's y, which torch.norm saved

    distance = _safe_matmul(x, y)
    if zero_diagonal:
        distance.fill_diagonal_(0)
    return distance


def _reduce_distance_matrix(distmat: Tensor, reduction: Optional[str] = None) -> Tensor:
    if reduction == "mean":
        return distmat.mean(dim=-1)
    if reduction == "sum":
        return distmat.sum(dim=-1)
    return distmat


def pairwise_cosine_similarity(x: Tensor, y: Optional[Tensor] = None, reduction=None, zero_diagonal=None) -> Tensor:
    distance = _pairwise_cosine_similarity_update(x, y, zero_diagonal)
    return _reduce_distance_matrix(distance, reduction)


class BagOfWordsEncoder(nn.Module):
    def __init__(self, vocab_size=30, dim=8):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.proj = nn.Linear(dim, dim)

    def forward(self, token_ids):
        return self.proj(self.embed(token_ids))


query_encoder = BagOfWordsEncoder()
doc_encoder = BagOfWordsEncoder()
queries = torch.randint(0, 30, (4, 5))
docs = torch.randint(0, 30, (4, 7))

query_emb = query_encoder(queries)
doc_emb = doc_encoder(docs)
scores = pairwise_cosine_similarity(query_emb, doc_emb) / 0.05
loss = F.cross_entropy(scores, torch.arange(4))
loss.backward()
