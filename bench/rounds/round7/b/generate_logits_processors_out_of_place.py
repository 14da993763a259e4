# label: safe
# why: after the fix each logits processor returns a processed copy (torch.where, scatter), so the raw logits stored by generate() keep the model's values.
# source: https://github.com/huggingface/transformers/pull/29680
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab_size=10, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids):
        hidden_states, _ = self.rnn(self.embed(input_ids))
        return {"logits": self.lm_head(hidden_states)}


class MinLengthLogitsProcessor:
    def __init__(self, min_length, eos_token_id):
        self.min_length = min_length
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores):
        vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
        eos_token_mask = vocab_tensor == self.eos_token_id
        scores_processed = scores.clone()
        if input_ids.shape[-1] < self.min_length:
            scores_processed = torch.where(eos_token_mask, -float("inf"), scores)
        return scores_processed


class RepetitionPenaltyLogitsProcessor:
    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        # if score < 0 then repetition penalty has to be multiplied to reduce the token probabilities
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        scores_processed = scores.scatter(1, input_ids, score)
        return scores_processed


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


@torch.no_grad()
def greedy_search(model, input_ids, logits_processor, max_new_tokens, output_logits=True, output_scores=True):
    raw_logits = () if output_logits else None
    scores = () if output_scores else None
    for _ in range(max_new_tokens):
        outputs = model(input_ids)
        next_token_logits = outputs["logits"][:, -1, :].clone()
        next_tokens_scores = logits_processor(input_ids, next_token_logits)
        if output_scores:
            scores += (next_tokens_scores,)
        if output_logits:
            raw_logits += (next_token_logits,)
        next_tokens = torch.argmax(next_tokens_scores, dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
    return input_ids, raw_logits, scores


model = TinyLM()
processors = LogitsProcessorList([MinLengthLogitsProcessor(min_length=6, eos_token_id=0),
                                  RepetitionPenaltyLogitsProcessor(penalty=1.5)])
prompt = torch.tensor([[3, 4, 5], [1, 2, 2]])
sequences, raw_logits, scores = greedy_search(model, prompt, processors, max_new_tokens=4)
logits_stack = torch.stack(raw_logits).nan_to_num(neginf=-1e4)
scores_stack = torch.stack(scores).nan_to_num(neginf=-1e4)
