# label: safe
# why: GRPO divides the sliced lm_head logits by the sampling temperature in place; the Linear that produced them did not save its output and the division happens before selective_log_softmax uses them.
# source: https://github.com/huggingface/trl/blob/d4ee70aa7e345ce6bea9e9fa1c475890874823ea/trl/trainer/grpo_trainer.py
import torch
from torch import nn

torch.manual_seed(0)


def selective_log_softmax(logits, index):
    selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
    logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
    return selected_logits - logsumexp_values


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=17, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask, logits_to_keep):
        h = self.mlp(self.embed_tokens(input_ids)) * attention_mask.unsqueeze(-1)
        h = torch.cumsum(h, dim=1)
        return {"logits": self.lm_head(h[:, -logits_to_keep:, :])}


class GRPOTrainer:
    def __init__(self, model, temperature=0.7, epsilon=0.2, beta=0.0):
        self.model = model
        self.temperature = temperature
        self.epsilon_low = self.epsilon_high = epsilon
        self.beta = beta

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep):
        logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=logits_to_keep + 1)["logits"]
        logits = logits[:, :-1, :]
        logits = logits[:, -logits_to_keep:, :]
        logits.div_(self.temperature)
        completion_ids = input_ids[:, -logits_to_keep:]
        return selective_log_softmax(logits, completion_ids)

    def compute_loss(self, inputs):
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.ones_like(input_ids)
        logits_to_keep = completion_ids.size(1)
        per_token_logps = self._get_per_token_logps(self.model, input_ids, attention_mask, logits_to_keep)
        advantages = inputs["advantages"]
        old_per_token_logps = per_token_logps.detach()
        coef_1 = torch.exp(per_token_logps - old_per_token_logps)
        coef_2 = torch.clamp(coef_1, 1 - self.epsilon_low, 1 + self.epsilon_high)
        per_token_loss = -torch.min(coef_1 * advantages.unsqueeze(1), coef_2 * advantages.unsqueeze(1))
        return per_token_loss.mean()


policy = TinyCausalLM()
trainer = GRPOTrainer(policy)
inputs = {
    "prompt_ids": torch.tensor([[1, 4, 2], [3, 3, 5]]),
    "completion_ids": torch.tensor([[7, 8, 9, 2], [6, 1, 0, 4]]),
    "advantages": torch.tensor([0.5, -0.5]),
}
loss = trainer.compute_loss(inputs)
loss.backward()
