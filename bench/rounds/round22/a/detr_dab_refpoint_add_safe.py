# label: safe
# why: DAB-DETR adds the un-sigmoided anchor to the box head output in place (tmp[..., :query_dim] += ...); tmp is the output of a Linear layer, which saves its input and weight but not its output, so the in-place add breaks no saved tensor.
# source: https://github.com/IDEA-Research/DAB-DETR/issues/62
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def inverse_sigmoid(x, eps=1e-3):
    x = x.clamp(min=0, max=1)
    x1 = x.clamp(min=eps)
    x2 = (1 - x).clamp(min=eps)
    return torch.log(x1 / x2)


class MLP(nn.Module):
    """ Very simple multi-layer perceptron (also called FFN)"""

    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class DABDETRHead(nn.Module):
    def __init__(self, hidden_dim=16, num_classes=5, num_queries=6, query_dim=4,
                 bbox_embed_diff_each_layer=True, num_layers=3):
        super().__init__()
        self.query_dim = query_dim
        self.bbox_embed_diff_each_layer = bbox_embed_diff_each_layer
        self.class_embed = nn.Linear(hidden_dim, num_classes)
        if bbox_embed_diff_each_layer:
            self.bbox_embed = nn.ModuleList([MLP(hidden_dim, hidden_dim, 4, 3) for _ in range(num_layers)])
        else:
            self.bbox_embed = MLP(hidden_dim, hidden_dim, 4, 3)

    def forward(self, hs, reference):
        if not self.bbox_embed_diff_each_layer:
            reference_before_sigmoid = inverse_sigmoid(reference)
            tmp = self.bbox_embed(hs)
            tmp[..., :self.query_dim] += reference_before_sigmoid
            outputs_coord = tmp.sigmoid()
        else:
            reference_before_sigmoid = inverse_sigmoid(reference)
            outputs_coords = []
            for lvl in range(hs.shape[0]):
                tmp = self.bbox_embed[lvl](hs[lvl])
                tmp[..., :self.query_dim] += reference_before_sigmoid[lvl]
                outputs_coord = tmp.sigmoid()
                outputs_coords.append(outputs_coord)
            outputs_coord = torch.stack(outputs_coords)

        outputs_class = self.class_embed(hs)
        out = {'pred_logits': outputs_class[-1], 'pred_boxes': outputs_coord[-1]}
        out['aux_outputs'] = [{'pred_logits': a, 'pred_boxes': b}
                              for a, b in zip(outputs_class[:-1], outputs_coord[:-1])]
        return out


def main():
    head = DABDETRHead()
    hs = torch.randn(3, 2, 6, 16, requires_grad=True)          # decoder layers x bs x queries x dim
    reference = torch.rand(3, 2, 6, 4).requires_grad_()          # sigmoid-space anchors per layer
    out = head(hs, reference)
    target_boxes = torch.rand(2, 6, 4)
    loss = F.l1_loss(out['pred_boxes'], target_boxes)
    for aux in out['aux_outputs']:
        loss = loss + F.l1_loss(aux['pred_boxes'], target_boxes)
    loss = loss + out['pred_logits'].pow(2).mean()
    loss.backward()
    return loss.detach(), hs.grad, reference.grad


loss, hs_grad, reference_grad = main()
