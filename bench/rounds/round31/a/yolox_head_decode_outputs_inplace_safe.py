# label: safe
# why: YOLOXHead decodes boxes with slice assignments (`outputs[..., :2] = ...`, `outputs[..., 2:4] = torch.exp(...) * strides`) into the tensor built by torch.cat/permute/reshape; nothing autograd saved lives in that storage, so even an attack that backpropagates from decoded boxes to the image gets the same gradients as the later torch.cat rewrite.
# source: https://github.com/Megvii-BaseDetection/YOLOX/commit/e80063b44a67f0f43c87152fb9d7623371286333
import torch
import torch.nn as nn

torch.manual_seed(0)


def meshgrid(*tensors):
    return torch.meshgrid(*tensors, indexing="ij")


class BaseConv(nn.Module):
    def __init__(self, in_channels, out_channels, ksize, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, ksize, stride, padding=(ksize - 1) // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class YOLOXHead(nn.Module):
    def __init__(self, num_classes=3, width=8, strides=(8, 16), in_channels=(8, 16)):
        super().__init__()
        self.n_anchors = 1
        self.num_classes = num_classes
        self.decode_in_inference = True
        self.cls_convs = nn.ModuleList()
        self.reg_convs = nn.ModuleList()
        self.cls_preds = nn.ModuleList()
        self.reg_preds = nn.ModuleList()
        self.obj_preds = nn.ModuleList()
        self.stems = nn.ModuleList()
        for i in range(len(in_channels)):
            self.stems.append(BaseConv(in_channels[i], width, 1))
            self.cls_convs.append(nn.Sequential(BaseConv(width, width, 3), BaseConv(width, width, 3)))
            self.reg_convs.append(nn.Sequential(BaseConv(width, width, 3), BaseConv(width, width, 3)))
            self.cls_preds.append(nn.Conv2d(width, self.n_anchors * self.num_classes, 1))
            self.reg_preds.append(nn.Conv2d(width, 4, 1))
            self.obj_preds.append(nn.Conv2d(width, self.n_anchors * 1, 1))
        self.use_l1 = True
        self.strides = strides
        self.grids = [torch.zeros(1)] * len(in_channels)

    def forward(self, xin, labels=None, imgs=None):
        outputs = []
        origin_preds = []
        x_shifts = []
        y_shifts = []
        expanded_strides = []

        for k, (cls_conv, reg_conv, stride_this_level, x) in enumerate(
            zip(self.cls_convs, self.reg_convs, self.strides, xin)
        ):
            x = self.stems[k](x)
            cls_x = x
            reg_x = x

            cls_feat = cls_conv(cls_x)
            cls_output = self.cls_preds[k](cls_feat)

            reg_feat = reg_conv(reg_x)
            reg_output = self.reg_preds[k](reg_feat)
            obj_output = self.obj_preds[k](reg_feat)

            if self.training:
                output = torch.cat([reg_output, obj_output, cls_output], 1)
                output, grid = self.get_output_and_grid(output, k, stride_this_level, xin[0].type())
                x_shifts.append(grid[:, :, 0])
                y_shifts.append(grid[:, :, 1])
                expanded_strides.append(torch.zeros(1, grid.shape[1]).fill_(stride_this_level).type_as(xin[0]))
                if self.use_l1:
                    batch_size = reg_output.shape[0]
                    hsize, wsize = reg_output.shape[-2:]
                    reg_output = reg_output.view(batch_size, self.n_anchors, 4, hsize, wsize)
                    reg_output = reg_output.permute(0, 1, 3, 4, 2).reshape(batch_size, -1, 4)
                    origin_preds.append(reg_output.clone())
            else:
                output = torch.cat([reg_output, obj_output.sigmoid(), cls_output.sigmoid()], 1)

            outputs.append(output)

        if self.training:
            return torch.cat(outputs, 1), torch.cat(origin_preds, 1)
        else:
            self.hw = [x.shape[-2:] for x in outputs]
            # [batch, n_anchors_all, 85]
            outputs = torch.cat([x.flatten(start_dim=2) for x in outputs], dim=2).permute(0, 2, 1)
            if self.decode_in_inference:
                return self.decode_outputs(outputs, dtype=xin[0].type())
            else:
                return outputs

    def get_output_and_grid(self, output, k, stride, dtype):
        grid = self.grids[k]

        batch_size = output.shape[0]
        n_ch = 5 + self.num_classes
        hsize, wsize = output.shape[-2:]
        if grid.shape[2:4] != output.shape[2:4]:
            yv, xv = meshgrid([torch.arange(hsize), torch.arange(wsize)])
            grid = torch.stack((xv, yv), 2).view(1, 1, hsize, wsize, 2).type(dtype)
            self.grids[k] = grid

        output = output.view(batch_size, self.n_anchors, n_ch, hsize, wsize)
        output = output.permute(0, 1, 3, 4, 2).reshape(batch_size, self.n_anchors * hsize * wsize, -1)
        grid = grid.view(1, -1, 2)
        output[..., :2] = (output[..., :2] + grid) * stride
        output[..., 2:4] = torch.exp(output[..., 2:4]) * stride
        return output, grid

    def decode_outputs(self, outputs, dtype):
        grids = []
        strides = []
        for (hsize, wsize), stride in zip(self.hw, self.strides):
            yv, xv = meshgrid([torch.arange(hsize), torch.arange(wsize)])
            grid = torch.stack((xv, yv), 2).view(1, -1, 2)
            grids.append(grid)
            shape = grid.shape[:2]
            strides.append(torch.full((*shape, 1), stride))

        grids = torch.cat(grids, dim=1).type(dtype)
        strides = torch.cat(strides, dim=1).type(dtype)

        outputs[..., :2] = (outputs[..., :2] + grids) * strides
        outputs[..., 2:4] = torch.exp(outputs[..., 2:4]) * strides
        return outputs


class TinyBackbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.c3 = BaseConv(3, 8, 3, stride=8)
        self.c4 = BaseConv(8, 16, 3, stride=2)

    def forward(self, x):
        p3 = self.c3(x)
        p4 = self.c4(p3)
        return [p3, p4]


def main():
    backbone = TinyBackbone()
    head = YOLOXHead()

    # training step: L1 on decoded boxes of the training path
    imgs = torch.randn(2, 3, 32, 32)
    backbone.train()
    head.train()
    decoded, origin_preds = head(backbone(imgs))
    train_loss = decoded[..., :4].abs().mean() * 1e-2 + origin_preds.pow(2).mean() + decoded[..., 4:].sigmoid().mean()
    train_loss.backward()

    # evaluation: adversarial perturbation driven by the decoded predictions
    backbone.eval()
    head.eval()
    adv = torch.randn(1, 3, 32, 32, requires_grad=True)
    preds = head(backbone(adv))
    boxes = preds[..., :4]
    scores = preds[..., 4:5] * preds[..., 5:]
    attack_loss = scores.max(dim=-1).values.sum() + boxes[..., 2:4].mean() * 1e-3
    attack_loss.backward()
    return preds.detach(), adv.grad, head.reg_preds[0].weight.grad


preds, adv_grad, reg_grad = main()
