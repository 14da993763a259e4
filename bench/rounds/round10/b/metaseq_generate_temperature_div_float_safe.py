# label: safe
# why: during generation the temperature is applied with div_ to a float32 copy of the decoder logits inside torch.no_grad(), and nothing else reads that copy.
# source: https://github.com/facebookresearch/metaseq/pull/247
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyDecoder(nn.Module):
    def __init__(self, vocab=11, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, incremental_state=None):
        x, h = self.rnn(self.embed(tokens[:, -1:]), incremental_state.get("h") if incremental_state else None)
        if incremental_state is not None:
            incremental_state["h"] = h
        return self.out(x[:, -1]).half(), {"attn": None}

    def get_normalized_probs(self, net_output, log_probs):
        logits = net_output[0].float()
        return F.log_softmax(logits, dim=-1) if log_probs else F.softmax(logits, dim=-1)


class SequenceGenerator:
    def __init__(self, model, temperature=0.7, max_len=5):
        self.model = model
        self.temperature = temperature
        self.max_len = max_len

    @torch.no_grad()
    def _generate(self, src_tokens):
        tokens = src_tokens.clone()
        incremental_states = {}
        scores = []
        for step in range(self.max_len):
            model_out = self.model(tokens, incremental_state=incremental_states)
            model_predictions = model_out[0].float()
            model_predictions.div_(self.temperature)
            lprobs = self.model.get_normalized_probs((model_predictions, model_out[1]), log_probs=True)
            next_tok = lprobs.argmax(-1, keepdim=True)
            scores.append(lprobs.gather(-1, next_tok))
            tokens = torch.cat([tokens, next_tok], dim=1)
        return tokens, torch.cat(scores, dim=1)


generator = SequenceGenerator(TinyDecoder())
src_tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
tokens, scores = generator._generate(src_tokens)
