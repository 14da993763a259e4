# label: hazard raises no-twin
# why: the test biases out unsampled words by assigning into the nn.Parameter `softmax_b[i]` directly, an in-place write to a leaf that requires grad outside torch.no_grad().
# source: https://github.com/allenai/allennlp/commit/fe460702f76b91f50c56f6973bff74768ae8fe7b ("Fix in-place op on leaf-tensor view", tests/modules/sampled_softmax_loss_test.py)
from typing import Tuple

import numpy as np
import torch

torch.manual_seed(0)


class SoftmaxLoss(torch.nn.Module):
    def __init__(self, num_words: int, embedding_dim: int) -> None:
        super().__init__()
        self.softmax_w = torch.nn.Parameter(torch.randn(embedding_dim, num_words) / np.sqrt(embedding_dim))
        self.softmax_b = torch.nn.Parameter(torch.zeros(num_words))

    def forward(self, embeddings, targets):
        probs = torch.nn.functional.log_softmax(torch.matmul(embeddings, self.softmax_w) + self.softmax_b, dim=-1)
        return -torch.nn.functional.nll_loss(probs, targets.long(), reduction="sum")


class SampledSoftmaxLoss(torch.nn.Module):
    def __init__(self, num_words: int, embedding_dim: int, num_samples: int) -> None:
        super().__init__()
        self.softmax_w = torch.nn.Parameter(torch.randn(num_words, embedding_dim) / np.sqrt(embedding_dim))
        self.softmax_b = torch.nn.Parameter(torch.zeros(num_words))
        self._num_words = num_words
        self._num_samples = num_samples
        self.choice_func = None

    def forward(self, embeddings, targets):
        sampled_ids, _ = self.choice_func(self._num_words, self._num_samples)
        sampled_ids = torch.from_numpy(sampled_ids)
        all_ids = torch.cat([targets, sampled_ids], dim=0)
        all_w = torch.nn.functional.embedding(all_ids, self.softmax_w)
        all_b = torch.nn.functional.embedding(all_ids, self.softmax_b.unsqueeze(1)).squeeze(1)
        n = targets.size(0)
        true_logits = (all_w[:n] * embeddings).sum(dim=1) + all_b[:n]
        sampled_logits = torch.matmul(embeddings, all_w[n:].t()) + all_b[n:]
        logits = torch.cat([true_logits.unsqueeze(1), sampled_logits], dim=1)
        log_softmax = torch.nn.functional.log_softmax(logits, dim=1)
        return -log_softmax[:, 0].sum()


NUM_WORDS = 50
sampled_softmax = SampledSoftmaxLoss(num_words=NUM_WORDS, embedding_dim=6, num_samples=5)
unsampled_softmax = SoftmaxLoss(num_words=NUM_WORDS, embedding_dim=6)

FAKE_SAMPLES = [3, 9, 17, 28, 49]


def fake_choice(num_words: int, num_samples: int) -> Tuple[np.ndarray, int]:
    assert (num_words, num_samples) == (NUM_WORDS, 5)
    return np.array(FAKE_SAMPLES), 7


sampled_softmax.choice_func = fake_choice

# bias out the unsampled terms:
for i in range(NUM_WORDS):
    if i not in FAKE_SAMPLES:
        unsampled_softmax.softmax_b[i] = -10000  # <-- IPL003: index assignment into a Parameter (leaf requiring grad)

# set weights equal, use transpose because opposite shapes
sampled_softmax.softmax_w.data = unsampled_softmax.softmax_w.t()
sampled_softmax.softmax_b.data = unsampled_softmax.softmax_b

embedding = torch.rand(8, 6)
targets = torch.tensor([3, 9, 17, 28, 49, 3, 9, 17])
full_loss = unsampled_softmax(embedding, targets)
sampled_loss = sampled_softmax(embedding, targets)
(full_loss + sampled_loss).backward()
