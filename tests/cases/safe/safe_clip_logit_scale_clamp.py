# label: safe no-twin
# why: open_clip clamps the learnable logit_scale in place under torch.no_grad right after optimizer.step(), once the graph that used it has already been backpropagated.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyCLIP(nn.Module):
    def __init__(self, img_dim=10, txt_dim=7, embed_dim=4):
        super().__init__()
        self.visual = nn.Sequential(nn.Linear(img_dim, 8), nn.GELU(), nn.Linear(8, embed_dim))
        self.text = nn.Sequential(nn.Linear(txt_dim, 8), nn.GELU(), nn.Linear(8, embed_dim))
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def forward(self, image, text):
        image_features = F.normalize(self.visual(image), dim=-1)
        text_features = F.normalize(self.text(text), dim=-1)
        return image_features, text_features, self.logit_scale.exp()


def clip_loss(image_features, text_features, logit_scale):
    logits_per_image = logit_scale * image_features @ text_features.T
    labels = torch.arange(image_features.shape[0])
    return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_image.T, labels)) / 2


torch.manual_seed(0)
model = TinyCLIP()
optimizer = torch.optim.AdamW(model.parameters(), lr=0.5)
for step in range(3):
    images = torch.randn(5, 10)
    texts = torch.randn(5, 7)
    optimizer.zero_grad()
    loss = clip_loss(*model(images, texts))
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        model.logit_scale.clamp_(0, math.log(100))
final_scale = model.logit_scale.detach().clone()
