# label: hazard raises
# why: iterating `for b in w` unbinds the class-weight tensor into views and `b[infs] = 0.0` writes into them; with a target that requires grad autograd forbids it
# source: https://github.com/Project-MONAI/MONAI/issues/3618
import torch
from torch.nn.modules.loss import _Loss

torch.manual_seed(0)


class GeneralizedDiceLoss(_Loss):
    def __init__(self, include_background=True, sigmoid=True, w_type="square",
                 smooth_nr=1e-5, smooth_dr=1e-5, batch=False):
        super().__init__()
        self.include_background = include_background
        self.sigmoid = sigmoid
        self.w_type = w_type
        self.smooth_nr = float(smooth_nr)
        self.smooth_dr = float(smooth_dr)
        self.batch = batch

    def w_func(self, grnd):
        if self.w_type == "simple":
            return torch.reciprocal(grnd)
        if self.w_type == "square":
            return torch.reciprocal(grnd * grnd)
        return torch.ones_like(grnd)

    def forward(self, input, target):
        if self.sigmoid:
            input = torch.sigmoid(input)
        reduce_axis = torch.arange(2, len(input.shape)).tolist()
        if self.batch:
            reduce_axis = [0] + reduce_axis
        intersection = torch.sum(target * input, reduce_axis)
        ground_o = torch.sum(target, reduce_axis)
        pred_o = torch.sum(input, reduce_axis)
        denominator = ground_o + pred_o

        w = self.w_func(ground_o.float())
        for b in w:
            infs = torch.isinf(b)
            b[infs] = 0.0  # <-- IPL001: b is one of several views returned by unbind of w, the reciprocal output saved for backward
            b[infs] = torch.max(b)

        f = 1.0 - (2.0 * (intersection * w).sum(0 if self.batch else 1) + self.smooth_nr) / (
            (denominator * w).sum(0 if self.batch else 1) + self.smooth_dr)
        return torch.mean(f)


prediction = torch.randn(2, 3, 4, 4, 4)
target = (torch.rand(2, 3, 4, 4, 4) > 0.7).float()
target[:, 2] = 0.0  # an empty class -> inf weight
prediction.requires_grad = True
target.requires_grad = True

generalized_dice_loss = GeneralizedDiceLoss()
loss = generalized_dice_loss(prediction, target)
loss.backward()
