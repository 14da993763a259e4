# label: safe
# why: after the fix the processor masks a clone of the logits, so the tensor stored in raw_logits keeps its unprocessed values
# source: https://github.com/epfl-dlab/transformers-CFG/pull/27
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=10, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.head(self.emb(input_ids).mean(1, keepdim=True))


class IncrementalGrammarConstraint:
    def __init__(self, allowed):
        self.allowed = allowed

    def batch_filter_vocab(self, input_ids, vocab_size):
        acceptance = torch.zeros(input_ids.shape[0], vocab_size, dtype=torch.bool)
        last = input_ids[:, -1]
        for i, tok in enumerate(last.tolist()):
            acceptance[i, self.allowed[tok % len(self.allowed)]] = True
        return acceptance


class GrammarConstrainedLogitsProcessor:
    def __init__(self, grammar_constraint):
        self.grammar_constraint = grammar_constraint

    def mask_logits(self, logits, acceptance):
        masked_logits = logits.clone()
        masked_logits[~acceptance] = -math.inf
        return masked_logits

    def process_logits(self, input_ids, scores):
        acceptance = self.grammar_constraint.batch_filter_vocab(input_ids, scores.shape[-1])
        return self.mask_logits(scores, acceptance)

    def __call__(self, input_ids, scores):
        return self.process_logits(input_ids, scores)


def greedy_generate(model, input_ids, logits_processor, max_new_tokens=3):
    raw_logits = ()
    scores = ()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            next_token_logits = model(input_ids)[:, -1, :]
            raw_logits += (next_token_logits,)
            next_token_scores = logits_processor(input_ids, next_token_logits)
            scores += (next_token_scores,)
            next_tokens = torch.argmax(next_token_scores, dim=-1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    return {"sequences": input_ids, "logits": raw_logits, "scores": scores}


model = TinyLM()
grammar = IncrementalGrammarConstraint(allowed=[[1, 2], [3, 4, 5], [0, 6], [7, 8, 9]])
processor = GrammarConstrainedLogitsProcessor(grammar)
out = greedy_generate(model, torch.tensor([[1, 2], [3, 0]]), processor)
sequences = out["sequences"]
first_step_logits = out["logits"][0]
raw_probs = torch.softmax(torch.stack(out["logits"]), dim=-1)
