# label: hazard silent
# why: a top-k logits warper masks the caller's logits in place, so the "raw" scores the generation loop keeps for reporting are the filtered ones.
import torch
import torch.nn as nn


def top_k_filter(logits, top_k, filter_value=-float("inf")):
    kth = torch.topk(logits, top_k, dim=-1).values[..., -1, None]
    logits.masked_fill_(logits < kth, filter_value)  # <-- IPL004: caller still uses `logits`
    return logits


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.lm_head(out)


@torch.no_grad()
def sample(model, input_ids, steps, top_k=3, temperature=0.8):
    raw_scores = []
    for _ in range(steps):
        logits = model(input_ids)[:, -1, :] / temperature
        raw = logits
        filtered = top_k_filter(logits, top_k)
        probs = torch.softmax(filtered, dim=-1)
        next_tokens = torch.multinomial(probs, 1)
        raw_scores.append(torch.log_softmax(raw, dim=-1).clamp(min=-30.0))
        input_ids = torch.cat([input_ids, next_tokens], dim=-1)
    return input_ids, torch.stack(raw_scores, 1)


torch.manual_seed(0)
lm = TinyCausalLM()
prompt = torch.tensor([[1, 2], [5, 7]])
out_ids, scores = sample(lm, prompt, 4)
out_ids_f = out_ids.float()
