# label: safe
# why: step_log_prob is a fresh zeros buffer and each step_log_prob[b] = ... writes a different row through CopySlices, so no value saved for backward is overwritten and the gradients of every batch row stay correct (the reviewer's warning was unfounded).
# source: https://github.com/billy-enrizky/openbrowser-ai/pull/64
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenoisingStep:
    def __init__(self, masked_state, attention_mask, newly_unmasked_indices, unmasked_tokens):
        self.masked_state = masked_state
        self.attention_mask = attention_mask
        self.newly_unmasked_indices = newly_unmasked_indices
        self.unmasked_tokens = unmasked_tokens


class TinyDiffusionLM(nn.Module):
    def __init__(self, vocab_size=32, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, attention_mask):
        h = torch.tanh(self.embed(input_ids)) * attention_mask.unsqueeze(-1)
        return self.lm_head(h)


def compute_step_log_prob(model, step, condition_length):
    B = step.masked_state.size(0)
    device = step.masked_state.device
    logits = model(input_ids=step.masked_state, attention_mask=step.attention_mask)
    response_logits = logits[:, condition_length:, :]
    log_probs = F.log_softmax(response_logits.float(), dim=-1)

    # Sum log-probs at newly-unmasked positions
    step_log_prob = torch.zeros(B, device=device)
    for b in range(B):
        indices = step.newly_unmasked_indices[b]
        tokens = step.unmasked_tokens[b]
        if not indices:
            continue
        idx_t = torch.tensor(indices, dtype=torch.long, device=device)
        tok_t = torch.tensor(tokens, dtype=torch.long, device=device)
        step_log_prob[b] = log_probs[b, idx_t, tok_t].sum()
    return step_log_prob


def main():
    model = TinyDiffusionLM()
    B, L = 3, 10
    step = DenoisingStep(
        masked_state=torch.randint(0, 32, (B, L)),
        attention_mask=torch.ones(B, L),
        newly_unmasked_indices=[[0, 2], [], [1, 3, 4]],
        unmasked_tokens=[[5, 7], [], [1, 2, 3]],
    )
    step_log_prob = compute_step_log_prob(model, step, condition_length=4)
    advantages = torch.tensor([0.5, -1.0, 1.5])
    loss = -(advantages * step_log_prob).mean()
    loss.backward()
    return step_log_prob.detach(), model.lm_head.weight.grad.clone()


step_log_prob, head_grad = main()
