# label: safe
# why: ngrams binds in place into n_gram, but n_gram is a fresh torch.roll output that no earlier op saved, and mul_ keeps its own copy of the old value, so the learned symbol embeddings get the same gradients as with bind().
# source: https://github.com/hyperdimensional-computing/torchhd/pull/33 (commit ff34552916de3293f970a4a393ebd9efe8e5fa0f, torchhd/functional.py ngrams)
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def bind(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    return torch.mul(input, other, out=out)


def permute(input: Tensor, *, shifts=1, dims=-1) -> Tensor:
    return torch.roll(input, shifts=shifts, dims=dims)


def multiset(input: Tensor, *, dim=-2, keepdim=False, dtype=None, out=None) -> Tensor:
    return torch.sum(input, dim=dim, keepdim=keepdim, dtype=dtype, out=out)


def ngrams(input: Tensor, n=3) -> Tensor:
    n_gram = permute(input[..., :-(n - 1), :], shifts=n - 1)
    for i in range(1, n - 1):
        n_gram.mul_(permute(input[..., i:-(n - 1 - i), :], shifts=n - 1 - i))
    n_gram.mul_(input[..., n - 1:, :])
    return multiset(n_gram)


class LanguageModel(nn.Module):
    def __init__(self, num_classes, size, num_symbols):
        super(LanguageModel, self).__init__()
        self.symbol = nn.Embedding(num_symbols, size)
        self.classify = nn.Linear(size, num_classes, bias=False)

    def encode(self, x):
        symbols = self.symbol(x)
        sample_hv = ngrams(symbols, n=3)
        return torch.tanh(sample_hv)

    def forward(self, x):
        enc = self.encode(x)
        logit = self.classify(enc)
        return logit


def main():
    model = LanguageModel(num_classes=4, size=64, num_symbols=27)
    samples = torch.randint(0, 27, (5, 12))
    labels = torch.randint(0, 4, (5,))
    logits = model(samples)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    return loss.detach(), model.symbol.weight.grad, model.classify.weight.grad


loss, symbol_grad, classify_grad = main()
