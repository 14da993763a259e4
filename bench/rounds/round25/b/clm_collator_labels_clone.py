# label: safe
# why: the fixed DataCollatorForLanguageModeling clones input_ids into labels before writing -100 over the pad positions, so the in-place masking never reaches batch["input_ids"] that the model embeds.
# source: https://github.com/huggingface/transformers/pull/8621
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ToyTokenizer:
    pad_token_id = 0

    def pad(self, examples):
        max_len = max(len(e["input_ids"]) for e in examples)
        input_ids = torch.full((len(examples), max_len), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(examples), max_len), dtype=torch.long)
        for i, e in enumerate(examples):
            input_ids[i, : len(e["input_ids"])] = torch.tensor(e["input_ids"])
            attention_mask[i, : len(e["input_ids"])] = 1
        return {"input_ids": input_ids, "attention_mask": attention_mask}


class DataCollatorForLanguageModeling:
    def __init__(self, tokenizer, mlm=False):
        self.tokenizer = tokenizer
        self.mlm = mlm

    def __call__(self, examples):
        batch = self.tokenizer.pad(examples)
        if not self.mlm:
            labels = batch["input_ids"].clone()
            if self.tokenizer.pad_token_id is not None:
                labels[labels == self.tokenizer.pad_token_id] = -100
            batch["labels"] = labels
        return batch


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=20, hidden=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden_states = self.wte(input_ids) * attention_mask.unsqueeze(-1)
        logits = self.lm_head(torch.cumsum(hidden_states, dim=1))
        shift_logits = logits[:, :-1, :].contiguous()
        shift_labels = labels[:, 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1), ignore_index=-100)
        return loss, logits


def main():
    collator = DataCollatorForLanguageModeling(ToyTokenizer(), mlm=False)
    examples = [{"input_ids": [5, 7, 9, 2]}, {"input_ids": [4, 3, 2]}, {"input_ids": [8, 6, 11, 13, 2]}]
    batch = collator(examples)
    model = TinyCausalLM()
    loss, logits = model(**batch)
    loss.backward()
    return batch["input_ids"], batch["labels"], loss.detach(), model.wte.weight.grad


input_ids, labels, loss, wte_grad = main()
