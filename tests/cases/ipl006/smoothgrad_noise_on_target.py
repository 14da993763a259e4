# label: hazard raises
# why: SmoothGrad noise is added in place to the embedding tensor after it fed the model, so autograd.grad w.r.t. that name no longer finds it in the graph.
import torch
import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab=15, dim=6, classes=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.classifier = nn.Linear(dim, classes)

    def forward_from_embeds(self, embeds):
        return self.classifier(self.encoder(embeds).mean(1))


torch.manual_seed(0)
model = TextClassifier()
input_ids = torch.tensor([[1, 4, 9, 2], [3, 3, 7, 0]])
embeds = model.embeddings(input_ids)
logits = model.forward_from_embeds(embeds)
target_score = logits[:, 1].sum()
noisy_embeds = embeds.add_(0.1 * torch.randn_like(embeds))  # <-- IPL006, IPL001: `embeds` is the grad target below, and the encoder saved it
(saliency,) = torch.autograd.grad(target_score, embeds)
attribution = (saliency * noisy_embeds).sum(-1)
