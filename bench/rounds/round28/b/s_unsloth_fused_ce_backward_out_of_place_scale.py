# label: safe
# why: after the fix backward rescales the precomputed gradients out of place, so ctx.saved_tensors keep their version and a second backward through the retained graph works.
# source: https://github.com/unslothai/unsloth-zoo/pull/610
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UnslothFusedLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden_states, lm_head_weight, labels, n_items, scaling, chunk_size=4):
        hidden_states = hidden_states.reshape(-1, hidden_states.shape[-1])
        labels = labels.reshape(-1)
        grad_inputs = torch.empty_like(hidden_states)
        grad_lm_head = torch.zeros_like(lm_head_weight)
        total_loss = torch.zeros((), dtype=hidden_states.dtype)
        for start in range(0, hidden_states.shape[0], chunk_size):
            end = min(start + chunk_size, hidden_states.shape[0])
            with torch.enable_grad():
                h = hidden_states[start:end].detach().requires_grad_(True)
                w = lm_head_weight.detach().requires_grad_(True)
                logits = h @ w.t()
                loss = F.cross_entropy(logits.float(), labels[start:end], ignore_index=-100, reduction="sum")
                loss = loss / n_items * scaling
                g_h, g_w = torch.autograd.grad(loss, (h, w))
            grad_inputs[start:end] = g_h
            grad_lm_head += g_w
            total_loss += loss.detach()
        ctx.save_for_backward(grad_inputs, grad_lm_head)
        ctx.scaling = scaling
        return total_loss / scaling

    @staticmethod
    def backward(ctx, grad_output):
        grad_inputs, grad_lm_head = ctx.saved_tensors
        scale_factor = grad_output / ctx.scaling
        # Out-of-place mul so that ctx.saved_tensors' version counter does not bump
        grad_inputs = grad_inputs * scale_factor
        grad_lm_head = grad_lm_head * scale_factor
        return grad_inputs, grad_lm_head, None, None, None, None


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=20, hidden_size=12):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.mlp = nn.Linear(hidden_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, labels, scaling=1.0):
        hidden_states = torch.tanh(self.mlp(self.embed_tokens(input_ids)))
        shift_hidden = hidden_states[:, :-1].reshape(-1, hidden_states.shape[-1])
        shift_labels = labels[:, 1:].reshape(-1)
        n_items = (shift_labels != -100).sum()
        return UnslothFusedLoss.apply(shift_hidden, self.lm_head.weight, shift_labels, n_items, scaling)


def main():
    model = TinyCausalLM()
    input_ids = torch.randint(0, 20, (2, 6))
    labels = input_ids.clone()
    labels[:, :2] = -100
    loss = model(input_ids, labels, scaling=8.0)
    loss.backward(retain_graph=True)
    first_grad = model.lm_head.weight.grad.clone()
    loss.backward()  # e.g. a second pass over the retained graph
    return loss.detach(), first_grad, model.lm_head.weight.grad


loss, first_grad, lm_head_grad = main()
