# label: safe
# why: after the fix the labels slice is cloned before the loss-masking spans are written, so the -100 markers land in a private copy and the input tokens of the micro-batch are untouched.
# source: https://github.com/ServiceNow/Fast-LLM/pull/253
import dataclasses

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@dataclasses.dataclass
class GPTBatch:
    token_ids: torch.Tensor
    loss_masking_spans: list


class LanguageModelEmbedding(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.word_embeddings_weight = nn.Parameter(torch.randn(vocab_size, hidden_size) * 0.1)

    def forward(self, input_):
        # negative token ids are padding: embed them as zeros
        token_mask = input_ >= 0
        masked_input = input_ * token_mask
        embeddings = torch.embedding(self.word_embeddings_weight, masked_input)
        return embeddings * token_mask.unsqueeze(-1)


class GPTModel(nn.Module):
    def __init__(self, vocab_size=16, hidden_size=8):
        super().__init__()
        self.embedding = LanguageModelEmbedding(vocab_size, hidden_size)
        self.mixer = nn.Linear(hidden_size, hidden_size)
        self.head = nn.Linear(hidden_size, vocab_size)

    def preprocess(self, batch, sequence_q, sequence_first=True, prediction_heads=1):
        sequence_length = batch.token_ids.shape[0] - prediction_heads
        preprocessed = []
        for sequence_k in range(sequence_q, sequence_length + 1, sequence_q):
            tokens = batch.token_ids[sequence_k - sequence_q : sequence_k]
            sequence_offset = sequence_k - sequence_q + 1  # +1 for shift in labels
            if sequence_first:
                labels = batch.token_ids[sequence_offset : sequence_k + prediction_heads]
            else:
                labels = batch.token_ids[:, sequence_offset : sequence_k + prediction_heads].contiguous()
            if batch.loss_masking_spans is not None:
                # avoid changing input tokens
                labels = labels.clone()
                for i, spans in enumerate(batch.loss_masking_spans):
                    valid_spans = spans[(spans[:, 0] <= sequence_k + prediction_heads - 1) & (spans[:, 1] >= sequence_offset)]
                    if valid_spans.numel():
                        valid_spans[:, 0].clamp_(min=sequence_offset)
                        valid_spans[:, 1].clamp_(max=sequence_k + prediction_heads - 1)
                        valid_spans -= sequence_offset
                        for start, end in valid_spans:
                            labels[start : end + 1, i] = -100
            preprocessed.append((tokens, {"labels": labels}))
        return preprocessed

    def forward(self, tokens):
        hidden = torch.tanh(self.mixer(self.embedding(tokens)))
        return self.head(hidden)


def main():
    model = GPTModel()
    token_ids = torch.randint(0, 16, (9, 2))  # (sequence, batch) because sequence_first
    spans = [torch.tensor([[1, 3]]), torch.tensor([[0, 2]])]  # prompt spans excluded from the loss
    batch = GPTBatch(token_ids=token_ids, loss_masking_spans=[s.clone() for s in spans])
    total = 0.0
    for tokens, kwargs in model.preprocess(batch, sequence_q=4):
        logits = model(tokens)
        total = total + F.cross_entropy(logits.flatten(0, 1), kwargs["labels"].flatten(), ignore_index=-100)
    total.backward()
    return total.detach(), model.embedding.word_embeddings_weight.grad


total, embedding_grad = main()
