# label: hazard silent
# why: `calibrated = raw_logits.div_(T)` also rescales raw_logits, so the later comparison between raw and calibrated confidences reads the new values.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)

classifier = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
inputs = torch.randn(12, 10)
temperature = 2.5

with torch.no_grad():
    raw_logits = classifier(inputs)
    calibrated = raw_logits.div_(temperature)  # <-- IPL002: raw_logits is read again below
    raw_conf = F.softmax(raw_logits, dim=1).max(dim=1).values
    cal_conf = F.softmax(calibrated, dim=1).max(dim=1).values
    confidence_drop = (raw_conf - cal_conf).mean()
