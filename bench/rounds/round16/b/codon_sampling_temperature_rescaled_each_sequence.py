# label: hazard silent
# why: sample_non_deterministic divides the caller's logits by the temperature in place, and the caller loops over num_sequences with the same logits, so sequence k is sampled at temperature**k
# source: https://github.com/Adibvafa/CodonTransformer/issues/19 (fixed by PR #20)
import torch
import torch.nn as nn

torch.manual_seed(0)


def sample_non_deterministic(logits, temperature=0.2, top_p=0.95):
    if not isinstance(temperature, float) or temperature <= 0:
        raise ValueError("Temperature must be a positive float.")
    logits /= temperature  # <-- IPL004: caller's logits rescaled in place on every call
    probs = torch.softmax(logits, dim=-1)
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = probs_sum - probs_sort > top_p
    probs_sort[mask] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    next_token = torch.multinomial(probs_sort[0], num_samples=1)
    predicted_indices = torch.gather(probs_idx[0], -1, next_token).squeeze(-1)
    return predicted_indices, probs


class TinyCodonModel(nn.Module):
    def __init__(self, vocab=12, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.out(torch.tanh(self.emb(input_ids)))


def predict_dna_sequence(model, input_ids, deterministic=False, temperature=0.2, top_p=0.95, num_sequences=3):
    model.eval()
    with torch.no_grad():
        logits = model(input_ids)
        predictions, all_probs = [], []
        for _ in range(num_sequences):
            if deterministic:
                predicted_indices = logits.argmax(dim=-1).squeeze().tolist()
            else:
                predicted_indices, probs = sample_non_deterministic(logits=logits, temperature=temperature, top_p=top_p)
                all_probs.append(probs)
            predictions.append(predicted_indices)
    return torch.stack(predictions), torch.stack(all_probs)


model = TinyCodonModel()
input_ids = torch.tensor([[1, 5, 7, 2, 9, 3]])
sequences, sequence_probs = predict_dna_sequence(model, input_ids, temperature=0.5, num_sequences=3)
