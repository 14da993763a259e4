# label: hazard raises no-twin
# why: _init_weight writes sin/cos slices into the nn.Embedding weight Parameter while it still requires grad, so torch refuses the in-place write on a view of a leaf.
# source: https://github.com/huggingface/transformers/issues/8021
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class SinusoidalPositionalEmbedding(nn.Embedding):
    """This module produces sinusoidal positional embeddings of any length."""

    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__(num_positions, embedding_dim)
        if embedding_dim % 2 != 0:
            raise NotImplementedError(f"odd embedding_dim {embedding_dim} not supported")
        self.weight = self._init_weight(self.weight)

    @staticmethod
    def _init_weight(out: nn.Parameter):
        n_pos, dim = out.shape
        position_enc = torch.tensor(
            [[pos / math.pow(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)]
        )
        out[:, 0 : dim // 2] = torch.sin(position_enc[:, 0::2])  # <-- IPL003: slice write into a Parameter that requires grad
        out[:, dim // 2 :] = torch.cos(position_enc[:, 1::2])  # <-- IPL003: second slice write into the same leaf Parameter
        out.detach_()
        out.requires_grad = False
        return out

    @torch.no_grad()
    def forward(self, input_ids, use_cache=False):
        bsz, seq_len = input_ids.shape[:2]
        if use_cache:
            positions = input_ids.data.new(1, 1).fill_(seq_len - 1)
        else:
            positions = torch.arange(seq_len, dtype=torch.long, device=self.weight.device)
        return super().forward(positions)


embed_positions = SinusoidalPositionalEmbedding(16, 8)
input_ids = torch.randint(0, 10, (2, 5))
pos = embed_positions(input_ids)
