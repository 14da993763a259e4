# label: safe
# why: the fix rebinds labels with an out-of-place clamp, so the caller's -100 padding survives; the masked_fill_ calls act on gather/sum results that no backward formula saved
# source: https://github.com/huggingface/transformers/pull/13464
from dataclasses import dataclass

import torch
import torch.nn as nn

torch.manual_seed(0)


@dataclass
class LabelSmoother:
    """
    Adds label-smoothing on a pre-computed output from a Transformers model.
    """

    epsilon: float = 0.1
    ignore_index: int = -100

    def __call__(self, model_output, labels):
        logits = model_output["logits"] if isinstance(model_output, dict) else model_output[0]
        log_probs = -nn.functional.log_softmax(logits, dim=-1)
        if labels.dim() == log_probs.dim() - 1:
            labels = labels.unsqueeze(-1)

        padding_mask = labels.eq(self.ignore_index)
        # In case the ignore_index is -100, the gather will fail, so we replace labels by 0. The padding_mask
        # will ignore them in any case.
        labels = torch.clamp(labels, min=0)
        nll_loss = log_probs.gather(dim=-1, index=labels)
        smoothed_loss = log_probs.sum(dim=-1, keepdim=True)

        nll_loss.masked_fill_(padding_mask, 0.0)
        smoothed_loss.masked_fill_(padding_mask, 0.0)

        # Take the mean over the label dimensions, then divide by the number of active elements (i.e. not-padded):
        num_active_elements = padding_mask.numel() - padding_mask.long().sum()
        nll_loss = nll_loss.sum() / num_active_elements
        smoothed_loss = smoothed_loss.sum() / (num_active_elements * log_probs.shape[-1])
        return (1 - self.epsilon) * nll_loss + self.epsilon * smoothed_loss


class TinySeq2SeqHead(nn.Module):
    def __init__(self, vocab=7, dim=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return {"logits": self.lm_head(torch.tanh(self.embed(input_ids)))}


def compute_loss(model, inputs, label_smoother):
    labels = inputs.pop("labels")
    outputs = model(**inputs)
    loss = label_smoother(outputs, labels)
    return loss, outputs


def compute_metrics(logits, labels):
    preds = logits.argmax(-1)
    mask = labels != -100
    return (preds[mask] == labels[mask]).float().mean()


model = TinySeq2SeqHead()
input_ids = torch.randint(1, 7, (3, 5))
labels = torch.randint(1, 7, (3, 5))
labels[:, 3:] = -100  # padded positions
inputs = {"input_ids": input_ids, "labels": labels}

loss, outputs = compute_loss(model, inputs, LabelSmoother(epsilon=0.1))
loss.backward()

accuracy = compute_metrics(outputs["logits"].detach(), labels)
