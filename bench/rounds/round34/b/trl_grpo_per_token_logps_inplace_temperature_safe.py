# label: safe
# why: GRPOTrainer._get_per_token_logps_and_entropies after the commit scales with `logits.div_(self.temperature)`; the logits are a fresh slice of the LM head output that nothing has saved yet (the linear layer keeps its input, not its output), and selective_log_softmax / entropy_from_logits only read them afterwards.
# source: https://github.com/huggingface/trl/commit/c49f3753ed0526f701a369b581bce77bef1744a7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def selective_log_softmax(logits, index) -> torch.Tensor:
    """
    A memory-efficient implementation of the common `log_softmax -> gather` operation.
    """
    if logits.dtype in [torch.float32, torch.float64]:
        selected_logits = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
        # loop to reduce peak mem consumption
        logsumexp_values = torch.stack([torch.logsumexp(lg, dim=-1) for lg in logits])
        per_token_logps = selected_logits - logsumexp_values  # log_softmax(x_i) = x_i - logsumexp(x)
    else:
        per_token_logps = []
        for row_logits, row_labels in zip(logits, index, strict=True):  # loop to reduce peak mem consumption
            row_logps = F.log_softmax(row_logits, dim=-1)
            row_per_token_logps = row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1)
            per_token_logps.append(row_per_token_logps)
        per_token_logps = torch.stack(per_token_logps)
    return per_token_logps


def entropy_from_logits(logits: torch.Tensor, chunk_size: int = 128) -> torch.Tensor:
    """Compute the Shannon entropy (in nats) for each row of *logits* in a memory-efficient way."""
    original_shape = logits.shape[:-1]
    num_classes = logits.shape[-1]
    flat_logits = logits.reshape(-1, num_classes)
    entropies = []
    for chunk in flat_logits.split(chunk_size, dim=0):
        logps = F.log_softmax(chunk, dim=-1)
        chunk_entropy = -(torch.exp(logps) * logps).sum(-1)
        entropies.append(chunk_entropy)
    entropies = torch.cat(entropies, dim=0)
    return entropies.reshape(original_shape)


class CausalLMOutput(dict):
    def __getattr__(self, name):
        return self[name]


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=40, hidden=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.layer = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.SiLU(), nn.Linear(2 * hidden, hidden))
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None, use_cache=False):
        h = self.embed_tokens(input_ids)
        h = h + self.layer(h)
        return CausalLMOutput(logits=self.lm_head(self.norm(h)))


class GRPOTrainer:
    def __init__(self, model, temperature=0.9):
        self.model = model
        self.temperature = temperature
        self.model_kwarg_keys = ("input_ids", "attention_mask", "use_cache")

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None, compute_entropy=False):
        """Compute log-probs and (optionally) entropies for each token."""
        batch_size = batch_size or input_ids.size(0)  # Chunk inputs into smaller batches to reduce memory peak
        all_logps = []
        all_entropies = []
        for start in range(0, input_ids.size(0), batch_size):
            input_ids_batch = input_ids[start : start + batch_size]
            attention_mask_batch = attention_mask[start : start + batch_size]

            model_inputs = {"input_ids": input_ids_batch, "attention_mask": attention_mask_batch}
            if "logits_to_keep" in self.model_kwarg_keys:
                model_inputs["logits_to_keep"] = logits_to_keep + 1
            model_inputs["use_cache"] = False  # only used in generation; set False to suppress warnings

            logits = model(**model_inputs).logits
            # Exclude the last value: it corresponds to the next token pred
            logits = logits[:, :-1, :]  # (B, L-1, H)
            # Only keep the last logits_to_keep. For model that support logits_to_keep, this is a no-op.
            logits = logits[:, -logits_to_keep:, :]  # (B, logits_to_keep, H)
            # Divide logits by sampling temperature.
            logits.div_(self.temperature)
            completion_ids = input_ids_batch[:, -logits_to_keep:]
            logps = selective_log_softmax(logits, completion_ids)  # compute logprobs
            all_logps.append(logps)

            if compute_entropy:
                with torch.no_grad():
                    entropies = entropy_from_logits(logits)
                all_entropies.append(entropies)

        logps = torch.cat(all_logps, dim=0)
        entropies = torch.cat(all_entropies, dim=0) if compute_entropy else None
        return logps, entropies

    def compute_loss(self, inputs):
        prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.ones_like(input_ids)
        logits_to_keep = completion_ids.size(1)
        per_token_logps, entropies = self._get_per_token_logps_and_entropies(
            self.model, input_ids, attention_mask, logits_to_keep, batch_size=2, compute_entropy=True
        )
        advantages = inputs["advantages"]
        old_per_token_logps = per_token_logps.detach()
        coef_1 = torch.exp(per_token_logps - old_per_token_logps)
        per_token_loss = -coef_1 * advantages.unsqueeze(1)
        loss = per_token_loss.mean()
        return loss, entropies


def main():
    trainer = GRPOTrainer(TinyCausalLM())
    inputs = {
        "prompt_ids": torch.randint(0, 40, (4, 5)),
        "completion_ids": torch.randint(0, 40, (4, 6)),
        "advantages": torch.randn(4),
    }
    loss, entropies = trainer.compute_loss(inputs)
    loss.backward()
    return loss.detach(), entropies, trainer.model.lm_head.weight.grad.clone(), trainer.model.norm.weight.grad.clone()


loss, entropies, lm_head_grad, norm_grad = main()
