from ttanjit.cli import main

raise SystemExit(main())
