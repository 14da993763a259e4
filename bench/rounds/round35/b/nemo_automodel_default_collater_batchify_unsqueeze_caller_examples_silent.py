# label: hazard silent
# why: default_collater concatenates pre-batched tensor fields with `torch.cat([batchify(v) for v in values])`, and batchify adds the batch axis with `tensor.unsqueeze_(0)` on the caller's example tensors; after one epoch every cached example is reshaped from [S] to [1, S], so the length-grouped sampler that reads `len(example["input_ids"])` sees length 1 everywhere and the next epoch is batched differently.
# source: https://github.com/NVIDIA-NeMo/Automodel/issues/3933
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


def batchify(tensor, default_tensor_cls=torch.LongTensor):
    """
    Ensures that the input tensor has at least two dimensions by adding an extra batch dimension if necessary.
    """
    if not isinstance(tensor, torch.Tensor):
        tensor = default_tensor_cls(tensor)
    if tensor.ndim == 1:
        return tensor.unsqueeze_(0)  # <-- IPL004
    return tensor


def extract_key_from_dicts(batch, key):
    return list(map(lambda x: x[key], batch))


def pad_within_micro(batch, pad_token_id, pad_seq_len_divisible=None):
    max_len = max(map(len, batch))
    if pad_seq_len_divisible:
        max_len = math.ceil(max_len / pad_seq_len_divisible) * pad_seq_len_divisible
    if pad_token_id is None:
        pad_token_id = batch[0][-1]
    return [item + [pad_token_id] * (max_len - len(item)) for item in batch]


def get_pad_token_from_key(val, pad_token_ids=None):
    PAD_TOKEN_IDS = {"labels": -100, "attention_mask": 0, "loss_mask": 0, "input_ids": 0}
    if pad_token_ids is None:
        pad_token_ids = {}
    return pad_token_ids.get(val, PAD_TOKEN_IDS.get(val, None))


def default_collater(batch, pad_seq_len_divisible=None):
    pad_token_ids = batch[0].pop("___PAD_TOKEN_IDS___", None)
    ans = {}
    for key in batch[0].keys():
        values = extract_key_from_dicts(batch, key)
        if all(isinstance(v, torch.Tensor) for v in values):
            # Pre-batched fields: concatenate along the batch dim rather than treating it as a ragged list[int].
            ans[key] = torch.cat([batchify(v) for v in values], dim=0)
        else:
            ans[key] = pad_within_micro(values, get_pad_token_from_key(key, pad_token_ids), pad_seq_len_divisible)

    # convert to tensors (already-tensor fields are passed through batchify unchanged)
    result = {k: batchify(v if isinstance(v, torch.Tensor) else torch.LongTensor(v)) for k, v in ans.items()}

    if "attention_mask" in result:
        result["padding_mask"] = ~result["attention_mask"].bool()
    elif "input_ids" in result:
        input_ids_pad_token = get_pad_token_from_key("input_ids", pad_token_ids) or 0
        result["padding_mask"] = (result["input_ids"] == input_ids_pad_token).bool()
    return result


class PreTokenizedDataset:
    """Keeps pre-tokenized, fixed-length examples in memory and returns the same tensors every epoch."""

    def __init__(self, num_examples, seq_lens, vocab_size):
        self.examples = []
        for i in range(num_examples):
            seq_len = seq_lens[i % len(seq_lens)]
            ids = torch.randint(1, vocab_size, (seq_len,))
            self.examples.append({"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones(seq_len, dtype=torch.long)})

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        return self.examples[idx]


class LengthGroupedSampler:
    """Groups examples of equal length into the same micro-batch (largest first)."""

    def __init__(self, dataset, batch_size):
        self.dataset = dataset
        self.batch_size = batch_size

    def __iter__(self):
        lengths = [len(self.dataset[i]["input_ids"]) for i in range(len(self.dataset))]
        order = sorted(range(len(self.dataset)), key=lambda i: (-lengths[i], i))
        for start in range(0, len(order), self.batch_size):
            yield order[start:start + self.batch_size]


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.proj = nn.Linear(dim, vocab_size)

    def forward(self, input_ids):
        return self.proj(torch.tanh(self.embed(input_ids)))


def run_epoch(model, optimizer, dataset, sampler):
    losses = []
    for batch_indices in sampler:
        batch = default_collater([dataset[i] for i in batch_indices])
        logits = model(batch["input_ids"])
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), batch["labels"][:, 1:].reshape(-1),
                               ignore_index=-100)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


vocab_size = 32
dataset = PreTokenizedDataset(num_examples=8, seq_lens=[6, 6, 9, 9, 12, 12, 6, 6], vocab_size=vocab_size)
model = TinyLM(vocab_size, dim=16)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
sampler = LengthGroupedSampler(dataset, batch_size=2)
epoch_losses = [run_epoch(model, optimizer, dataset, sampler) for _ in range(2)]
epoch1_losses, epoch2_losses = epoch_losses
example_lengths = torch.tensor([len(ex["input_ids"]) for ex in dataset.examples])
first_example_ids = dataset.examples[0]["input_ids"]
