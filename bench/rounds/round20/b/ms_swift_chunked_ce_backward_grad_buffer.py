# label: safe
# why: the fixed backward fills a freshly allocated `grad_logits` buffer chunk by chunk, so the in-place slice writes never touch the saved logits that the auxiliary z-loss still needs.
# source: https://github.com/modelscope/ms-swift/pull/10130 (issue https://github.com/modelscope/ms-swift/issues/10129)
import math
from typing import Any

import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss

torch.manual_seed(0)


class ChunkedCrossEntropyLoss(torch.autograd.Function):

    @staticmethod
    def forward(ctx, logits, labels, chunk_size):
        ctx.save_for_backward(logits, labels)
        ctx.chunk_size = chunk_size

        losses = []
        for i in range(math.ceil(logits.shape[0] / chunk_size)):
            l_start = i * chunk_size
            l_end = min((i + 1) * chunk_size, logits.shape[0])
            logits_chunk = logits[l_start:l_end]
            labels_chunk = labels[l_start:l_end]
            loss_fct = CrossEntropyLoss(reduction='none')
            loss_chunk = loss_fct(logits_chunk, labels_chunk)
            losses.append(loss_chunk)
            del logits_chunk
            del labels_chunk
        all_losses = torch.cat(losses)
        return all_losses

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any):
        logits, labels = ctx.saved_tensors
        chunk_size = ctx.chunk_size
        grad_logits = torch.empty_like(logits)

        for i in range(math.ceil(logits.shape[0] / chunk_size)):
            l_start = i * chunk_size
            l_end = min((i + 1) * chunk_size, logits.shape[0])
            logits_chunk = logits[l_start:l_end].detach().requires_grad_(True)
            labels_chunk = labels[l_start:l_end]
            loss_fct = CrossEntropyLoss(reduction='none')
            with torch.enable_grad():
                loss_chunk = loss_fct(logits_chunk, labels_chunk)
                grad_output_chunk = grad_outputs[0][l_start:l_end]
                _loss_chunk = (loss_chunk * grad_output_chunk).sum()
                grad_chunk = torch.autograd.grad(_loss_chunk, logits_chunk, retain_graph=False)[0]
                grad_logits[l_start:l_end] = grad_chunk

        return grad_logits, None, None


def loss_scale_func(logits, labels, loss_scale=None, num_items_in_batch=None, chunk_size=4):
    logits = logits.view(-1, logits.shape[-1])
    labels = labels.flatten()
    loss = ChunkedCrossEntropyLoss.apply(logits, labels, chunk_size)
    if loss_scale is not None:
        loss = loss_scale.flatten() * loss
    mask = labels != -100
    total_loss = loss[mask].sum()
    if num_items_in_batch is None:
        total_loss = total_loss / mask.sum()
    else:
        total_loss = total_loss / num_items_in_batch
    return total_loss


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.SiLU())
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.mlp(self.embed_tokens(input_ids)))


def main():
    model = TinyCausalLM()
    input_ids = torch.randint(0, 32, (2, 6))
    labels = torch.cat([input_ids[:, 1:], torch.full((2, 1), -100)], dim=1)
    labels[0, :2] = -100
    logits = model(input_ids)
    # auxiliary z-loss on the same logits (keeps the softmax normaliser small)
    z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
    ce_loss = loss_scale_func(logits, labels)
    loss = ce_loss + 1e-3 * z_loss
    loss.backward()
    return loss.detach(), model.lm_head.weight.grad


loss, lm_head_grad = main()
