# label: hazard silent
# why: dilation() aliases the caller's non-flat structuring_element as `neighborhood` and writes -max_val into the positions masked out by `kernel`, so a later dilation that reuses the same structuring element with a full kernel sees those -1e4 entries.
# source: https://github.com/kornia/kornia/pull/1106
from typing import List, Optional

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def dilation(
    tensor: torch.Tensor,
    kernel: torch.Tensor,
    structuring_element: Optional[torch.Tensor] = None,
    origin: Optional[List[int]] = None,
    border_value: float = 0.0,
    max_val: float = 1e4,
) -> torch.Tensor:
    se_h, se_w = kernel.shape
    if origin is None:
        origin = [se_h // 2, se_w // 2]
    pad_e: List[int] = [origin[1], se_w - origin[1] - 1, origin[0], se_h - origin[0] - 1]
    output: torch.Tensor = F.pad(tensor, pad_e, mode="constant", value=-max_val)

    if structuring_element is None:
        neighborhood = torch.zeros_like(kernel)
        neighborhood[kernel == 0] = -max_val
    else:
        neighborhood = structuring_element
        neighborhood[kernel == 0] = -max_val  # <-- IPL004: overwrites the caller's structuring element

    output = output.unfold(2, se_h, 1).unfold(3, se_w, 1)
    output, _ = torch.max(output + neighborhood.flip((0, 1)), 4)
    output, _ = torch.max(output, 4)
    return output


image = torch.rand(1, 1, 7, 7)
structuring_element = torch.tensor([[0.1, 0.2, 0.1], [0.2, 0.3, 0.2], [0.1, 0.2, 0.1]])
cross = torch.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
square = torch.ones(3, 3)

dilated_cross = dilation(image, cross, structuring_element)
dilated_square = dilation(image, square, structuring_element)
morph_gradient = dilated_square - image
