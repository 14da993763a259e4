# label: safe
# why: logits.div_(temperature) writes into a slice of the lm_head output, which no backward formula saved, so per-token log-probs and policy gradients equal the out-of-place divide
# source: https://github.com/huggingface/trl/pull/6554
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=11, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.block = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids, attention_mask=None):
        h = self.block(self.embed(input_ids))
        return {"logits": self.lm_head(h)}


def selective_log_softmax(logits, index):
    logps = torch.log_softmax(logits, dim=-1)
    return torch.gather(logps, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)


class GRPOTrainer:
    def __init__(self, model, temperature=0.7):
        self.model = model
        self.temperature = temperature

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep):
        logits = model(input_ids=input_ids, attention_mask=attention_mask)["logits"]
        logits = logits[:, :-1, :]  # (B, L-1, V), exclude the last logit: it corresponds to the next token pred
        input_ids = input_ids[:, -logits_to_keep:]
        logits = logits[:, -logits_to_keep:]
        # Divide logits by sampling temperature.
        logits.div_(self.temperature)
        return selective_log_softmax(logits, input_ids)

    def compute_loss(self, inputs):
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        logits_to_keep = completion_ids.size(1)
        per_token_logps = self._get_per_token_logps(self.model, input_ids, None, logits_to_keep)
        old_per_token_logps = per_token_logps.detach()
        coef = torch.exp(per_token_logps - old_per_token_logps)
        per_token_loss = -coef * inputs["advantages"].unsqueeze(1)
        return per_token_loss.mean(), per_token_logps


model = TinyCausalLM()
trainer = GRPOTrainer(model)
inputs = {
    "prompt_ids": torch.randint(11, (3, 4)),
    "completion_ids": torch.randint(11, (3, 5)),
    "advantages": torch.tensor([1.0, -0.5, 0.25]),
}
loss, per_token_logps = trainer.compute_loss(inputs)
loss.backward()
