# label: safe
# why: GRPOTrainer divides the kept logits slice by the temperature in place; the lm_head matmul that produced them does not save its output and nothing reads the unscaled logits afterwards.
# source: https://github.com/huggingface/trl/pull/5254
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=11, hidden=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.layer = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None, logits_to_keep=0):
        hidden_states = torch.tanh(self.layer(self.embed_tokens(input_ids)))
        slice_indices = slice(-logits_to_keep, None) if logits_to_keep else slice(None)
        return {"logits": self.lm_head(hidden_states[:, slice_indices, :])}


def selective_log_softmax(logits, index):
    logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
    selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
    return selected_logits - logsumexp_values


class GRPOTrainer:
    def __init__(self, model, temperature=0.7):
        self.model = model
        self.temperature = temperature

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None):
        batch_size = batch_size or input_ids.size(0)
        all_logps = []
        for start in range(0, input_ids.size(0), batch_size):
            input_ids_batch = input_ids[start : start + batch_size]
            attention_mask_batch = attention_mask[start : start + batch_size]
            logits = model(
                input_ids=input_ids_batch, attention_mask=attention_mask_batch, logits_to_keep=logits_to_keep + 1
            )["logits"]
            logits = logits[:, :-1, :]  # (B, L-1, V), exclude the last logit: it corresponds to the next token pred
            input_ids_batch = input_ids_batch[:, -logits_to_keep:]
            logits = logits[:, -logits_to_keep:]
            # Divide logits by sampling temperature.
            logits.div_(self.temperature)
            logps = selective_log_softmax(logits, input_ids_batch)  # compute logprobs for the input tokens
            all_logps.append(logps)
        return torch.cat(all_logps, dim=0)

    def compute_loss(self, inputs):
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.ones_like(input_ids)
        logits_to_keep = completion_ids.size(1)
        per_token_logps = self._get_per_token_logps(self.model, input_ids, attention_mask, logits_to_keep, 2)
        old_per_token_logps = per_token_logps.detach()
        coef = torch.exp(per_token_logps - old_per_token_logps)
        per_token_loss = -coef * inputs["advantages"].unsqueeze(1)
        return per_token_loss.mean()


model = TinyCausalLM()
trainer = GRPOTrainer(model)
inputs = {
    "prompt_ids": torch.randint(0, 11, (4, 3)),
    "completion_ids": torch.randint(0, 11, (4, 5)),
    "advantages": torch.randn(4),
}
loss = trainer.compute_loss(inputs)
loss.backward()
