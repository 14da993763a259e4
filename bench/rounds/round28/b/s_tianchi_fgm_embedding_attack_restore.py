# label: safe no-twin
# why: FGM perturbs the word-embedding weight through param.data only after the clean loss has been backpropagated, runs a fresh adversarial forward/backward on the perturbed weight, and restores the backup before optimizer.step(), so no graph ever sees its saved weight change.
# source: https://github.com/t6am3/public_tianchi_yiqing_nlp/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FGM:
    def __init__(self, model):
        self.model = model
        self.backup = {}

    def attack(self, epsilon=1.0, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if param.requires_grad and emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0 and not torch.isnan(norm):
                    r_at = epsilon * param.grad / norm
                    param.data.add_(r_at)

    def restore(self, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if param.requires_grad and emb_name in name:
                assert name in self.backup
                param.data = self.backup[name]
        self.backup = {}


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_len=16):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_len, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        return self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(positions))


class BertForSequenceClassification(nn.Module):
    def __init__(self, vocab_size=30, hidden_size=16, num_labels=2):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden_size)
        self.encoder = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU())
        self.classifier = nn.Linear(hidden_size, num_labels)

    def forward(self, input_ids, labels):
        hidden = self.encoder(self.embeddings(input_ids))
        logits = self.classifier(hidden[:, 0])
        return (F.cross_entropy(logits, labels), logits)


def main():
    model = BertForSequenceClassification()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    fgm = FGM(model)
    losses = []
    for step in range(2):
        inputs = {"input_ids": torch.randint(0, 30, (4, 6)), "labels": torch.randint(0, 2, (4,))}
        loss = model(**inputs)[0]
        loss.backward()
        fgm.attack()  # add adversarial perturbation on the embedding
        loss_adv = model(**inputs)[0]
        loss_adv.backward()  # accumulate the adversarial gradient on top of the clean one
        fgm.restore()  # restore the embedding parameters
        optimizer.step()
        model.zero_grad()
        losses.append(torch.stack([loss.detach(), loss_adv.detach()]))
    return torch.stack(losses), model.embeddings.word_embeddings.weight.detach().clone()


losses, word_embeddings = main()
