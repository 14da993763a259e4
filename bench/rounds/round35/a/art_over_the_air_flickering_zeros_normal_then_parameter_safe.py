# label: safe
# why: The commit "Removed a requires grad" draws the flickering perturbation into a plain `torch.zeros(T, 3, 1, 1)` with normal_ and only then wraps it in a Parameter that requires grad, so the in-place initialisation happens before autograd tracks the tensor and the attack runs.
# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/commit/2e31c323989688dadd5f3e91ff3123c691c5e7ba
import logging
from typing import Optional

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class TinyVideoRecognizer(nn.Module):
    """Stand-in for the video classifier wrapped by the estimator: (1, T, 3, H, W) -> (1, classes)."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.conv = nn.Conv3d(3, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, video, return_loss=False):
        x = video.permute(0, 2, 1, 3, 4)  # (1, 3, T, H, W)
        x = torch.relu(self.conv(x)).mean(dim=(2, 3, 4))
        return self.fc(x)


class PyTorchEstimator:
    def __init__(self, model, nb_classes, device="cpu"):
        self.model = model
        self.nb_classes = nb_classes
        self.device = torch.device(device)


class OverTheAirFlickeringTorch:
    attack_params = ["regularization_param", "beta_1", "beta_2" "margin"]

    def __init__(self, classifier, regularization_param: float, beta_1: float, beta_2: float, margin: float):
        self.estimator = classifier
        self.regularization_param = regularization_param
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.margin = margin

    def generate(self, x: torch.Tensor, y: Optional[torch.Tensor] = None, num_epochs: int = 3, **kwargs):
        x = torch.as_tensor(x, device=self.estimator.device)
        y = torch.as_tensor(y, device=self.estimator.device)

        epoch_print_str = f"{num_epochs}:"

        delta = torch.nn.parameter.Parameter(
            torch.zeros(x[0].shape[1], 3, 1, 1).normal_(mean=0.0, std=0.2).to(self.estimator.device), requires_grad=True
        )

        # All values of delta needs to be within [V_min, V_max], so we get those
        # values here.
        v_min = torch.min(x).item()
        v_max = torch.max(x).item()

        # Learning rate from the paper.
        optimizer = torch.optim.AdamW([delta], lr=1e-3)

        # Training Loop
        for i in range(num_epochs):
            optimizer.zero_grad()
            preds = []

            for video in x:
                preds.append(torch.sigmoid(self.estimator.model(video + delta, return_loss=False)))

            preds = torch.stack(preds).to(self.estimator.device).squeeze(1)

            # Calculate the adversarial loss
            loss = self._objective(delta, preds, y)
            logger.info(f"Epoch {i + 1:>5}/{epoch_print_str:<6} Loss {loss:.7f}")

            loss.backward()
            optimizer.step()
            delta = torch.clamp(delta, v_min, v_max)

        return x + delta.detach()

    def _objective(self, delta: torch.Tensor, predictions: torch.Tensor, y: Optional[torch.Tensor] = None):
        T = delta.shape[0]
        # The first summation from equation (1)
        regularization_term = self.regularization_param * (
            self.beta_1 * self._thickness_regularization(delta, T)
            + self.beta_2 * self._roughness_regularization(delta, T)
        )

        return regularization_term + torch.mean(self._adversarial_loss(predictions, y))

    @staticmethod
    def _first_temporal_derivative(x: torch.Tensor) -> torch.Tensor:
        return torch.roll(x, 1, dims=0) - torch.roll(x, 0, dims=0)

    @staticmethod
    def _second_temporal_derivative(X: torch.Tensor) -> torch.Tensor:
        return torch.roll(X, -1, dims=0) - 2 * torch.roll(X, 0, dims=0) - torch.roll(X, 1, dims=0)

    def _roughness_regularization(self, delta: torch.Tensor, T: int) -> torch.Tensor:
        return (
            1
            / (3 * T)
            * (
                torch.pow(torch.norm(self._first_temporal_derivative(delta), 2), 2)
                + torch.pow(torch.norm(self._second_temporal_derivative(delta), 2), 2)
            )
        )

    @staticmethod
    def _thickness_regularization(delta: torch.Tensor, T: int) -> torch.Tensor:
        return torch.pow(torch.norm(delta, 2), 2) / (3 * T)

    def _adversarial_loss(self, predictions: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        # Number of samples x Number of Labels
        samples, n = predictions.shape
        pred_mask = torch.ones(samples, n).type(torch.bool)
        pred_mask[torch.arange(end=samples), y[:]] = False

        l_m = (
            predictions[pred_mask == False]
            - torch.max(predictions[pred_mask == True].view(samples, n - 1), dim=-1)[0]
            + self.margin
        )

        # Equation 3
        return torch.max(
            torch.zeros(y.shape).to(predictions.device), torch.min(1 / self.margin * torch.pow(l_m, 2), l_m)
        )


def main():
    torch.manual_seed(0)
    model = TinyVideoRecognizer(num_classes=5)
    estimator = PyTorchEstimator(model, nb_classes=5)
    attack = OverTheAirFlickeringTorch(estimator, regularization_param=0.1, beta_1=0.5, beta_2=0.5, margin=0.05)
    x = torch.rand(2, 1, 4, 3, 8, 8)  # (N, clips, T frames, C, H, W)
    y = torch.tensor([1, 3])
    x_adv = attack.generate(x, y, num_epochs=1)
    return x_adv, model


x_adv, model = main()
print(x_adv.shape)
