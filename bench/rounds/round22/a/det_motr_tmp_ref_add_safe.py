# label: safe
# why: MOTR's box refinement adds the inverse-sigmoid reference into tmp in place (tmp[..., :2] += reference, new_reference_points[..., :2] = ...); tmp is the output of a Linear layer, which keeps only its input and weight for backward, so the in-place write invalidates nothing.
# source: https://github.com/megvii-research/MOTRv2/issues/12
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def inverse_sigmoid(x, eps=1e-5):
    x = x.clamp(min=0, max=1)
    x1 = x.clamp(min=eps)
    x2 = (1 - x).clamp(min=eps)
    return torch.log(x1 / x2)


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class DeformableTransformerDecoder(nn.Module):
    def __init__(self, d_model=16, num_layers=3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d_model + 2, d_model) for _ in range(num_layers)])
        self.bbox_embed = None
        self.return_intermediate = True

    def forward(self, tgt, reference_points):
        output = tgt
        intermediate, intermediate_reference_points = [], []
        for lid, layer in enumerate(self.layers):
            output = torch.relu(layer(torch.cat([output, reference_points[..., :2]], dim=-1))) + output
            # hack implementation for iterative bounding box refinement
            if self.bbox_embed is not None:
                tmp = self.bbox_embed[lid](output)
                if reference_points.shape[-1] == 4:
                    new_reference_points = tmp + inverse_sigmoid(reference_points)
                    new_reference_points = new_reference_points.sigmoid()
                else:
                    assert reference_points.shape[-1] == 2
                    new_reference_points = tmp
                    new_reference_points[..., :2] = tmp[..., :2] + inverse_sigmoid(reference_points)
                    new_reference_points = new_reference_points.sigmoid()
                reference_points = new_reference_points.detach()
            if self.return_intermediate:
                intermediate.append(output)
                intermediate_reference_points.append(reference_points)
        return torch.stack(intermediate), torch.stack(intermediate_reference_points)


class MOTR(nn.Module):
    def __init__(self, d_model=16, num_layers=3, num_classes=2):
        super().__init__()
        self.class_embed = nn.ModuleList([nn.Linear(d_model, num_classes) for _ in range(num_layers)])
        self.bbox_embed = nn.ModuleList([MLP(d_model, d_model, 4, 3) for _ in range(num_layers)])
        self.decoder = DeformableTransformerDecoder(d_model, num_layers)
        self.decoder.bbox_embed = self.bbox_embed

    def forward(self, query, init_reference):
        hs, inter_references = self.decoder(query, init_reference)
        outputs_classes, outputs_coords = [], []
        for lvl in range(hs.shape[0]):
            if lvl == 0:
                reference = init_reference
            else:
                reference = inter_references[lvl - 1]
            reference = inverse_sigmoid(reference)
            outputs_class = self.class_embed[lvl](hs[lvl])
            tmp = self.bbox_embed[lvl](hs[lvl])
            if reference.shape[-1] == 4:
                tmp += reference
            else:
                assert reference.shape[-1] == 2
                tmp[..., :2] += reference
            outputs_coord = tmp.sigmoid()
            outputs_classes.append(outputs_class)
            outputs_coords.append(outputs_coord)
        return torch.stack(outputs_classes), torch.stack(outputs_coords)


def main():
    model = MOTR()
    query = torch.randn(2, 5, 16, requires_grad=True)
    init_reference = torch.rand(2, 5, 2).requires_grad_()
    outputs_class, outputs_coord = model(query, init_reference)
    loss = F.l1_loss(outputs_coord, torch.rand_like(outputs_coord)) + outputs_class.pow(2).mean()
    loss.backward()
    return loss.detach(), query.grad, init_reference.grad


loss, query_grad, reference_grad = main()
