# label: hazard raises
# why: the class head divides image_class_embeds and query_embeds in place by their own norms, but linalg.norm saved those tensors for its backward.
# source: https://github.com/huggingface/transformers/pull/24529
import torch
import torch.nn as nn

torch.manual_seed(0)


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, out_dim=8, query_dim=8):
        super().__init__()
        self.query_dim = query_dim
        self.dense0 = nn.Linear(16, query_dim)
        self.logit_shift = nn.Linear(16, 1)
        self.logit_scale = nn.Linear(16, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6  # <-- IPL001: norm saved image_class_embeds
        query_embeds /= torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6  # <-- IPL001: norm saved query_embeds

        # Get class predictions
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)

        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale

        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)
            pred_logits = torch.where(query_mask == 0, torch.tensor(-1e6), pred_logits)
        return (pred_logits, image_class_embeds)


class TextProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.text_projection = nn.Linear(12, 8, bias=False)

    def forward(self, pooled):
        return self.text_projection(pooled)


class_head = OwlViTClassPredictionHead()
text_model = TextProjection()
image_embeds = torch.randn(2, 9, 16)
text_pooled = torch.randn(2, 3, 12)
query_mask = torch.tensor([[1, 1, 0], [1, 1, 1]])

query_embeds = text_model(text_pooled)
pred_logits, class_embeds = class_head(image_embeds, query_embeds, query_mask)
target = torch.zeros_like(pred_logits)
target[:, :, 0] = 1.0
loss = nn.functional.binary_cross_entropy_with_logits(pred_logits, target)
loss.backward()
