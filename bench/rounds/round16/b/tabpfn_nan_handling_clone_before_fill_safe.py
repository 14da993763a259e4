# label: safe
# why: the encoder step clones x before writing the feature means into the NaN positions, so the caller's tensor in the state dict (reused by the next step) is untouched
# source: https://github.com/PriorLabs/TabPFN (file src/tabpfn/architectures/encoders/steps/nan_handling_encoder_step.py @ 627b3cb6fbfd170971a5a8cb038b5814c7cd56c0)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SeqEncStep(nn.Module):
    def __init__(self, in_keys, out_keys):
        super().__init__()
        self.in_keys = in_keys
        self.out_keys = out_keys

    def forward(self, state, single_eval_pos):
        args = [state[k] for k in self.in_keys]
        self._fit(*args, single_eval_pos=single_eval_pos)
        out = self._transform(*args)
        if not isinstance(out, tuple):
            out = (out,)
        state = dict(state)
        state.update(dict(zip(self.out_keys, out)))
        return state


class NanHandlingEncoderStep(SeqEncStep):
    nan_indicator = -2.0
    inf_indicator = 2.0
    neg_inf_indicator = 4.0

    def __init__(self, keep_nans=True, in_keys=("main",), out_keys=("main", "nan_indicators")):
        super().__init__(in_keys, out_keys)
        self.keep_nans = keep_nans
        self.register_buffer("feature_means_", torch.tensor([]), persistent=False)

    def _fit(self, x, single_eval_pos, **kwargs):
        train = x[:single_eval_pos]
        finite = torch.isfinite(train)
        self.feature_means_ = torch.where(finite, train, torch.zeros_like(train)).sum(0) / finite.sum(0).clamp(min=1)
        self.feature_means_ = self.feature_means_.detach()

    def _transform(self, x, **kwargs):
        nans_indicator = None
        if self.keep_nans:
            nans_indicator = (
                torch.isnan(x) * NanHandlingEncoderStep.nan_indicator
                + torch.logical_and(torch.isinf(x), torch.sign(x) == 1) * NanHandlingEncoderStep.inf_indicator
                + torch.logical_and(torch.isinf(x), torch.sign(x) == -1) * NanHandlingEncoderStep.neg_inf_indicator
            ).to(x.dtype)
        nan_mask = torch.logical_or(torch.isnan(x), torch.isinf(x))
        # replace nans with the mean of the corresponding feature
        x = x.clone()  # clone to avoid inplace operations
        x[nan_mask] = self.feature_means_.unsqueeze(0).expand_as(x)[nan_mask]
        return x, nans_indicator


class RawCopyStep(SeqEncStep):
    def _fit(self, *args, **kwargs):
        pass

    def _transform(self, x, **kwargs):
        return torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0) * 0.5


scale = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
raw = torch.tensor([[0.3, float("nan"), 1.0],
                    [1.2, 0.4, float("inf")],
                    [-0.7, 2.0, 0.1],
                    [0.5, float("nan"), -1.0]])
state = {"main": raw * scale}
state = NanHandlingEncoderStep()(state, single_eval_pos=3)
state = RawCopyStep(in_keys=("main",), out_keys=("raw_copy",))(state, single_eval_pos=3)
filled = state["main"]
loss = filled.pow(2).sum() + state["nan_indicators"].sum() + state["raw_copy"].sum()
loss.backward()
scale_grad = scale.grad
