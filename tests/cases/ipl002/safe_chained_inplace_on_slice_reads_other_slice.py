# label: safe no-twin
# why: corner boxes become centre boxes in place, as torchvision does: the chain writes the first two columns through a view and reads the last two, which it does not write
import torch

torch.manual_seed(0)


def xyxy_to_cxcywh_(xyxy: torch.Tensor) -> torch.Tensor:
    xyxy[..., 2:].sub_(xyxy[..., :2])
    xyxy[..., :2].mul_(2).add_(xyxy[..., 2:]).div_(2)
    return xyxy


boxes = torch.tensor([[0.0, 0.0, 4.0, 2.0], [1.0, 1.0, 3.0, 5.0]])
centres = xyxy_to_cxcywh_(boxes.clone())
