# label: hazard silent
# why: _preprocess_and_convert_inputs divides the permuted view of the caller's image batch in place (x_tensor /= norm_factor), so every predict() call rescales the user's images by 1/255 again; the /= on the freshly built labels tensor is harmless
# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/pull/2263 (fixes issue 2262; commit 52f64a838)
from typing import Dict, List

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def cast_inputs_to_pt(x, y=None):
    # tensors are passed through unchanged (numpy arrays would go through torch.from_numpy, which also shares memory)
    x_tensor = x
    y_tensor = None
    if isinstance(y, list):
        y_tensor = [{"boxes": y_i["boxes"], "labels": y_i["labels"]} for y_i in y]
    return x_tensor, y_tensor


def translate_predictions_xcycwh_to_x1y1x2y2(y_pred_xcycwh: torch.Tensor, height: int, width: int) -> List[Dict[str, torch.Tensor]]:
    y_pred_x1y1x2y2 = []
    device = y_pred_xcycwh.device
    for y_pred in y_pred_xcycwh:
        boxes = torch.vstack(
            [
                torch.maximum((y_pred[:, 0] - y_pred[:, 2] / 2), torch.tensor(0, device=device)),
                torch.maximum((y_pred[:, 1] - y_pred[:, 3] / 2), torch.tensor(0, device=device)),
                torch.minimum((y_pred[:, 0] + y_pred[:, 2] / 2), torch.tensor(height, device=device)),
                torch.minimum((y_pred[:, 1] + y_pred[:, 3] / 2), torch.tensor(width, device=device)),
            ]
        ).permute((1, 0))
        labels = torch.argmax(y_pred[:, 5:], dim=1, keepdim=False)
        scores = y_pred[:, 4]
        y_pred_x1y1x2y2.append({"boxes": boxes, "labels": labels, "scores": scores})
    return y_pred_x1y1x2y2


def translate_labels_x1y1x2y2_to_xcycwh(labels_x1y1x2y2: List[Dict[str, torch.Tensor]], height: int, width: int) -> torch.Tensor:
    labels_xcycwh_list = []
    device = labels_x1y1x2y2[0]["boxes"].device
    for i, label_dict in enumerate(labels_x1y1x2y2):
        labels = torch.zeros(len(label_dict["boxes"]), 6, device=device)
        labels[:, 0] = i
        labels[:, 1] = label_dict["labels"]
        labels[:, 2:6] = label_dict["boxes"]
        labels[:, 2:6:2] /= width
        labels[:, 3:6:2] /= height
        labels[:, 4] -= labels[:, 2]
        labels[:, 5] -= labels[:, 3]
        labels[:, 2] += labels[:, 4] / 2
        labels[:, 3] += labels[:, 5] / 2
        labels_xcycwh_list.append(labels)
    return torch.vstack(labels_xcycwh_list)


class TinyYolo(nn.Module):
    def __init__(self, nc=3, na=4):
        super().__init__()
        self.na, self.no = na, nc + 5
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, na * self.no)

    def forward(self, x):
        out = self.head(self.body(x).flatten(1)).view(-1, self.na, self.no)
        xy = out[..., :2].sigmoid() * 16
        wh = out[..., 2:4].exp()
        return torch.cat([xy, wh, out[..., 4:].sigmoid()], dim=-1)


class PyTorchYolo:
    def __init__(self, model, input_shape, clip_values=None, channels_first=True, preprocessing=None):
        self._model = model
        self._device = torch.device("cpu")
        self.input_shape = input_shape
        self.clip_values = clip_values
        self.channels_first = channels_first
        self.all_framework_preprocessing = preprocessing is None

    def _apply_preprocessing(self, x, y, fit=False, no_grad=True):
        return x, y

    def _preprocess_and_convert_inputs(self, x, y=None, fit=False, no_grad=True):
        if self.clip_values is not None:
            norm_factor = self.clip_values[1]
        else:
            norm_factor = 1.0

        if self.all_framework_preprocessing:
            x_tensor, y_tensor = cast_inputs_to_pt(x, y)

            if not self.channels_first:
                x_tensor = torch.permute(x_tensor, (0, 3, 1, 2))
            x_tensor /= norm_factor  # <-- IPL004: x_tensor is (a permuted view of) the caller's image batch

            if not no_grad:
                if x_tensor.is_leaf:
                    x_tensor.requires_grad = True
                else:
                    x_tensor.retain_grad()

            x_preprocessed, y_preprocessed = self._apply_preprocessing(x=x_tensor, y=y_tensor, fit=fit, no_grad=no_grad)
        else:
            raise NotImplementedError("Combination of inputs and preprocessing not supported.")

        return x_preprocessed, y_preprocessed

    def predict(self, x, batch_size=128):
        self._model.eval()
        x_preprocessed, _ = self._preprocess_and_convert_inputs(x=x, y=None, fit=False, no_grad=True)
        dataset = TensorDataset(x_preprocessed)
        dataloader = DataLoader(dataset=dataset, batch_size=batch_size, shuffle=False)

        if self.channels_first:
            height, width = self.input_shape[1], self.input_shape[2]
        else:
            height, width = self.input_shape[0], self.input_shape[1]

        predictions = []
        for (x_batch,) in dataloader:
            x_batch = x_batch.to(self._device)
            with torch.no_grad():
                predictions_xcycwh = self._model(x_batch)
            for prediction_x1y1x2y2 in translate_predictions_xcycwh_to_x1y1x2y2(predictions_xcycwh, height, width):
                predictions.append({k: v.detach().cpu() for k, v in prediction_x1y1x2y2.items()})
        return predictions


detector = PyTorchYolo(TinyYolo(), input_shape=(16, 16, 3), clip_values=(0, 255), channels_first=False)
images = torch.rand(2, 16, 16, 3) * 255  # NHWC, pixel values in [0, 255]

dets = detector.predict(images)
print("image max after first predict:", images.max().item())  # the benign image the notebook plots next
dets_again = detector.predict(images)
print("scores first / second:", dets[0]["scores"][:2].tolist(), dets_again[0]["scores"][:2].tolist())

targets = translate_labels_x1y1x2y2_to_xcycwh(dets, height=16, width=16)
print("targets", targets.shape)
