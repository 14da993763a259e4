# label: safe
# why: grpo_loss_torch applies the completion mask with `per_token_loss *= completion_mask` to the fresh result of a negation, whose backward needs no saved values, so the in-place masking leaves the policy gradient unchanged (the exp output it came from is a different tensor).
# source: https://github.com/fla-org/flash-linear-attention/blob/bc3b101dcb713ddc5bd8924b66754eb68b5ccf89/fla/modules/grpo.py (grpo_loss_torch)
import torch
import torch.nn as nn

torch.manual_seed(0)


def grpo_loss_torch(logits, ref_logp, input_ids, advantages, beta=0.1, completion_mask=None, save_kl=False):
    def get_log_probs(logits, input_ids):
        per_token_logps = []
        for logits_row, input_ids_row in zip(logits, input_ids[:, -logits.size(1):], strict=False):
            log_probs = logits_row.log_softmax(dim=-1)
            token_log_prob = torch.gather(log_probs, dim=1, index=input_ids_row.unsqueeze(1)).squeeze(1)
            per_token_logps.append(token_log_prob)
        return torch.stack(per_token_logps)

    logits = logits[:, :-1]
    per_token_logps = get_log_probs(logits, input_ids)
    ref_per_token_logps = ref_logp
    per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1

    per_token_loss = torch.exp(per_token_logps - per_token_logps.detach()) * advantages.unsqueeze(1)
    per_token_loss = -(per_token_loss - beta * per_token_kl)
    if completion_mask is not None:
        per_token_loss *= completion_mask
        if save_kl:
            per_token_kl *= completion_mask
    return per_token_loss if not save_kl else (per_token_loss, per_token_kl)


class TinyPolicy(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.lm_head(torch.tanh(self.embed(input_ids)))


def main():
    vocab, B, T, prompt_len = 13, 4, 9, 3
    policy = TinyPolicy(vocab, 16)
    input_ids = torch.randint(0, vocab, (B, T))
    logits = policy(input_ids)[:, prompt_len - 1:]
    ref_logp = torch.randn(B, T - prompt_len) * 0.1 - 2.0
    advantages = torch.randn(B)
    completion_mask = (torch.rand(B, T - prompt_len) > 0.2).float()
    per_token_loss, per_token_kl = grpo_loss_torch(
        logits, ref_logp, input_ids, advantages, completion_mask=completion_mask, save_kl=True)
    loss = (per_token_loss.sum(-1) / completion_mask.sum(-1).clamp(min=1)).mean()
    loss.backward()
    return loss.detach(), per_token_kl.detach(), policy.lm_head.weight.grad


loss, kl, grad = main()
