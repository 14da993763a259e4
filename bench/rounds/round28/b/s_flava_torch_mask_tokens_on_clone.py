# label: safe
# why: the caller hands torch_mask_tokens a clone of input_ids, so the collator's in-place [MASK]/random-word writes only touch the masked copy and the contrastive branch still sees the original ids.
# source: https://github.com/huggingface/transformers/issues/22103
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ToyTokenizer:
    mask_token = "[MASK]"
    vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[MASK]": 3}

    def __len__(self):
        return 24

    def convert_tokens_to_ids(self, token):
        return self.vocab[token]

    def get_special_tokens_mask(self, ids, already_has_special_tokens=True):
        return [1 if i in (0, 1, 2) else 0 for i in ids]


class DataCollatorForLanguageModeling:
    def __init__(self, tokenizer, mlm_probability=0.4):
        self.tokenizer = tokenizer
        self.mlm_probability = mlm_probability

    def torch_mask_tokens(self, inputs, special_tokens_mask=None):
        labels = inputs.clone()
        probability_matrix = torch.full(labels.shape, self.mlm_probability)
        if special_tokens_mask is None:
            special_tokens_mask = [
                self.tokenizer.get_special_tokens_mask(val, already_has_special_tokens=True) for val in labels.tolist()
            ]
            special_tokens_mask = torch.tensor(special_tokens_mask, dtype=torch.bool)
        probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
        masked_indices = torch.bernoulli(probability_matrix).bool()
        labels[~masked_indices] = -100
        indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
        inputs[indices_replaced] = self.tokenizer.convert_tokens_to_ids(self.tokenizer.mask_token)
        indices_random = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
        random_words = torch.randint(len(self.tokenizer), labels.shape, dtype=torch.long)
        inputs[indices_random] = random_words[indices_random]
        return inputs, labels


class FlavaForPreTraining(nn.Module):
    def __init__(self, vocab_size=24, hidden=16, image_dim=10):
        super().__init__()
        self.text_embeddings = nn.Embedding(vocab_size, hidden)
        self.text_encoder = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU())
        self.mlm_head = nn.Linear(hidden, vocab_size)
        self.image_projection = nn.Linear(image_dim, hidden)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def forward(self, input_ids, input_ids_masked, pixel_values, mlm_labels):
        # global contrastive branch runs on the unmasked text
        text_hidden = self.text_encoder(self.text_embeddings(input_ids))
        text_emb = F.normalize(text_hidden[:, 0], dim=-1)
        image_emb = F.normalize(self.image_projection(pixel_values), dim=-1)
        logits_per_text = self.logit_scale.exp() * text_emb @ image_emb.t()
        targets = torch.arange(input_ids.shape[0])
        gc_loss = (F.cross_entropy(logits_per_text, targets) + F.cross_entropy(logits_per_text.t(), targets)) / 2
        # MLM branch runs on the masked text
        masked_hidden = self.text_encoder(self.text_embeddings(input_ids_masked))
        mlm_logits = self.mlm_head(masked_hidden)
        mlm_loss = F.cross_entropy(mlm_logits.flatten(0, 1), mlm_labels.flatten(), ignore_index=-100)
        return gc_loss + mlm_loss, gc_loss


def main():
    tokenizer = ToyTokenizer()
    data_collator = DataCollatorForLanguageModeling(tokenizer=tokenizer)
    model = FlavaForPreTraining()
    body = torch.randint(4, 24, (4, 6))
    inputs = {
        "input_ids": torch.cat([torch.ones(4, 1, dtype=torch.long), body, torch.full((4, 1), 2)], dim=1),
        "pixel_values": torch.randn(4, 10),
    }
    inputs["input_ids_masked"], inputs["mlm_labels"] = data_collator.torch_mask_tokens(inputs=inputs["input_ids"].clone())
    loss, gc_loss = model(**inputs)
    loss.backward()
    return gc_loss.detach(), inputs["input_ids"], model.text_embeddings.weight.grad


gc_loss, input_ids, embedding_grad = main()
